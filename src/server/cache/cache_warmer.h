// Warming the record caches at start: a fresh server would otherwise read every chunk
// table and file record its first requests need one point lookup at a time (1,000 xorb
// tables for one 100,000-term answer), on top of fresh SQLite connections and pages. One
// scan of the index, newest records first, is far cheaper and runs before the server
// listens.
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

#include "common/result.h"
#include "server/cache/file_record_cache.h"
#include "server/cache/xorb_record_cache.h"
#include "store/index.h"

namespace xet {

struct CacheWarmStats {
  size_t xorbs = 0;               // chunk tables cached
  size_t files = 0;               // file records cached
  size_t plans = 0;               // whole-file plans cached (by the caller, from file_hashes)
  size_t bytes = 0;               // their accounted bytes
  double ms = 0;                  // wall time of the warm-up
  std::vector<Hash> file_hashes;  // the files cached, newest first
};

// Caches the most recently stored xorb tables, then file records, until each cache holds
// about min(budget_bytes, its capacity), the index has no more, or `deadline` has passed
// (a large index is not read whole at start); the newest end up the most recently used.
// budget_bytes 0 warms nothing. Errors: the index's scan errors (the records cached so far
// stay).
Result<CacheWarmStats> WarmRecordCaches(Index& index, XorbRecordCache& xorbs,
                                        FileRecordCache& files, size_t budget_bytes,
                                        std::chrono::steady_clock::time_point deadline);

}  // namespace xet
