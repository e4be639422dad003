// What the Index backends and their callers derive the same way: a xorb's record from its
// verified chunk table, which chunks of a xorb enter the global-dedup index, which xorbs a
// shard commit names, and the clock the SQLite backend stamps rows with (index.h, "operator
// tools").
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "format/hash.h"
#include "format/xorb.h"
#include "store/index.h"

namespace xet {

// The chunk hashes of `xorb` the dedup chunk index holds: chunk 0 and every chunk whose hash
// is global-dedup eligible (format/merkle.h), each once, in hash order.
std::vector<Hash> DedupIndexedChunks(const XorbRecord& xorb);

// The record of a verified xorb stored as an object of `object_size` bytes (chunks and
// footer): what PutXorb registers for it.
XorbRecord XorbRecordOf(const Hash& hash, const XorbChunkTable& table, uint64_t object_size);

// Every xorb `commit` names: its CAS section and its files' terms, each once, in hash order.
std::vector<Hash> XorbsNamedBy(const ShardCommit& commit);

// The refusal of a shard naming `xorb` when the uploader cannot see it (or it is not
// stored): InvalidArgument "references xorb <hex> which was not uploaded; upload xorbs
// before the shard". pg_schema.cc's xet_commit_shard raises the same text.
Status XorbNotUploaded(const Hash& xorb);

// `v` sorted by bytes, duplicates removed.
std::vector<Hash> SortedUniqueHashes(std::vector<Hash> v);

// This machine's wall clock in unix milliseconds.
int64_t WallClockMs();

}  // namespace xet
