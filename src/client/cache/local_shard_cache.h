// LocalShardCache: a directory of shards this client uploaded or received as global-dedup
// answers, kept across sessions so a re-upload finds its chunks without asking the server.
//
// Files are `<name>.shard`, written atomically (temp file + rename). Open() loads them
// newest first into a DedupIndex, up to the size bound; older files beyond the bound are
// deleted (eviction of the oldest by modification time). Files that do not parse, and
// keyed answers past their expiry, are deleted and skipped: a corrupted cache never fails
// an upload, it only dedups less. The bound also bounds the index's memory: each 48-byte
// chunk entry of a cached shard costs ~100 bytes of hash map and 40 bytes of its xorb's
// chunk sequence (for predicted boundaries), so the default 64 MiB of shards (~1.4 M
// chunks, ~87 GB of data) indexes in ~190 MB. The xorbs it loads are
// XorbTrust::kUnconfirmed: the cache says what the server had, not what it has.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "client/cache/dedup_index.h"
#include "common/result.h"
#include "common/status.h"

namespace xet {

inline constexpr uint64_t kDefaultShardCacheBytes = 64ull << 20;

struct ShardCacheLoad {
  size_t shards_loaded = 0;
  size_t chunks_indexed = 0;
  size_t files_removed = 0;  // evicted, corrupt or expired
};

class LocalShardCache {
 public:
  explicit LocalShardCache(std::string dir, uint64_t max_bytes = kDefaultShardCacheBytes)
      : dir_(std::move(dir)), max_bytes_(max_bytes) {}

  // Creates the directory if needed, evicts and loads as described above. `now` is seconds
  // since the epoch (expiry checks). IoError only if the directory cannot be created/read.
  Result<ShardCacheLoad> Load(DedupIndex& index, uint64_t now);

  // Stores `shard_bytes` (a shard in either form) as `<name>.shard`.
  Status Add(const std::string& name, std::span<const uint8_t> shard_bytes);

  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  uint64_t max_bytes_;
};

}  // namespace xet
