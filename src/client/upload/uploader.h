// Uploader: turns local files (or streams) into Xet files on a CAS server, sending only the
// chunks the server does not have.
//
// Pipeline (all stages concurrent, memory bounded by the queue sizes in UploadOptions):
//   read (one block ahead) → chunk + hash (one task per file, `hash_threads` in parallel;
//   a large file's blocks split across the cores the other tasks leave idle; where the
//   dedup index knows which chunk followed the previous one in an earlier upload, that
//   chunk's bytes are hashed and its end checked instead of scanned, with the spec's
//   boundaries all the same: an update re-chunks only what changed) → dedup (session
//   chunk map, then the persistent local shard cache, then global dedup queries for
//   eligible chunks, in the background) → pack new chunks into xorbs of up to 64 MiB /
//   8,192 chunks (several files share a xorb; one that 64 MiB of input did not add to is
//   sealed and sent at once, so an update's few new chunks do not wait for its end) → compress
//   (LZ4/BG4 by predictor) → upload xorbs (`upload_concurrency` in flight, adaptive) → build shards
//   (split at 64 MiB) → upload each shard once all its xorbs have landed.
// Fragmentation prevention: a deduplicated run shorter than kMinDedupRunChunks chunks (or
// kMinDedupRunBytes) between new data is re-uploaded instead of referenced, so files
// reconstruct from long runs; see the constants in uploader.cc (documented there).
// The resulting files become visible to the token's scope; registering them under paths
// (the bucket batch) is the caller's job.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "client/cas/cas_client.h"
#include "client/transfer_stats.h"
#include "common/byte_source.h"
#include "common/result.h"
#include "format/hash.h"
#include "format/merkle.h"
#include "format/sha256.h"
#include "format/shard_types.h"

namespace xet {

struct UploadOptions {
  size_t hash_threads = 0;         // 0 = hardware concurrency
  size_t upload_concurrency = 8;   // xorb uploads in flight (upper bound when adaptive)
  std::string shard_cache_dir;     // persistent local shard cache; "" = none
  bool global_dedup = true;        // query /v1/chunks for eligible chunks
  bool compute_sha256 = false;     // record SHA-256 in the shard's metadata extension
  TransferStats* stats = nullptr;  // optional live counters
};

// One file to upload: where its bytes come from. `open` is called once, from a pipeline
// thread, when the file's turn comes (so thousands of items do not hold open files).
struct UploadItem {
  std::string name;  // for error messages and progress ("data/a.bin")
  uint64_t size_hint = 0;
  std::function<Result<std::unique_ptr<ByteSource>>()> open;
  // A fragment of a file being composed from parts (client/upload/partial_edit.h): its
  // chunks are deduplicated, packed and uploaded like any file's, but no file is
  // registered for it; its UploadedFile carries its chunks and reconstruction instead.
  bool fragment = false;
};

struct UploadedFile {
  Hash file_hash;
  uint64_t size = 0;
  Sha256Digest sha256{};  // when computed
  // A fragment's chunks in order, and its terms (xorb hashes resolved) with their
  // verification entries; empty for other items.
  std::vector<ChunkInfo> chunks = {};
  std::vector<FileDataSequenceEntry> terms = {};
  std::vector<FileVerificationEntry> verification = {};
};

// Composes files from a session's fragments once every xorb of the session is durable:
// given each item's result, in item order, returns files to register in the session's
// shards (their terms may name any xorb the server has). An error fails the upload.
using ComposeFiles =
    std::function<Result<std::vector<FileInfo>>(std::span<const UploadedFile> results)>;

class Uploader {
 public:
  // `cas` must outlive the uploader.
  Uploader(CasClient& cas, UploadOptions options);
  ~Uploader();

  // Uploads every item; returns one UploadedFile per item, in order, once every xorb and
  // shard is durable on the server. On error (the first one wins) nothing of the failed
  // session is referenced by a shard the server registered only partially: shards are
  // uploaded after all their xorbs; a retry of the same items re-sends only what is missing.
  // `compose`, if set, adds the files it returns to the shards (see ComposeFiles).
  Result<std::vector<UploadedFile>> Upload(std::span<const UploadItem> items,
                                           const ComposeFiles& compose = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace xet
