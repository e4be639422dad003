// Accepting an uploaded shard: validate every file reconstruction against the stored
// xorbs, then register the files in one durable index transaction.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "common/result.h"
#include "server/cache/visible_xorb_cache.h"
#include "server/cache/xorb_record_cache.h"
#include "store/index.h"
#include "store/object_store.h"

namespace xet {

struct ShardIngestOptions {
  // Scopes whose xorbs the shard's terms may reference (the uploader's read scopes; empty
  // = any xorb, for admins).
  std::span<const Scope> visible_scopes;
  // The scope the files are registered to.
  Scope scope;
  // Called with (verified, total) as terms are verified; may be empty.
  std::function<void(size_t verified, size_t total)> progress;
  // Where the referenced xorbs' chunk tables are read (a cache shared across requests, over
  // the same index); null reads each from the index once per shard. Existence is checked
  // against the index either way.
  XorbRecordCache* xorb_records = nullptr;
  // Positive visibility answers remembered across requests (may be null): a xorb found
  // there is not looked up before validation. The index checks visibility again when it
  // registers the shard (ShardCommit::visible_scopes), so a stale answer never lets a shard
  // through; it costs the stored shard object of a refused upload.
  VisibleXorbCache* visible_xorbs = nullptr;
};

struct ShardIngestResult {
  ShardCommitResult result = ShardCommitResult::kRegistered;
  size_t num_files = 0;
};

// Parses `body` (the upload form: no footer, verification entries on every file), and
// checks, before anything is written:
// - every xorb a term references exists and is visible to options.visible_scopes;
// - each term's chunk range lies inside its xorb and its unpacked size matches the stored
//   chunk sizes; its verification hash equals the hash of the stored chunk hashes;
// - each file hash equals the file hash recomputed from the stored chunk hashes, and the
//   metadata-extension SHA-256 (if any) is kept;
// - every CAS-info block describes a stored xorb exactly (chunk hashes, sizes, offsets).
// Then stores the shard under ShardKey(SHA-256 of the body) and registers all files in
// one Index::CommitShard transaction, which checks visibility again. InvalidArgument (400)
// with a message naming the file/term on any validation failure; nothing is registered
// then. A shard naming a xorb its uploader cannot see is refused for that (naming the first
// such xorb) whatever else is wrong with it.
Result<ShardIngestResult> IngestShard(std::span<const uint8_t> body,
                                      const ShardIngestOptions& options, Index& index,
                                      ObjectStore& objects);

}  // namespace xet
