#include "server/cache/cache_warmer.h"

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

namespace xet {
namespace {

// Reads the newest records of one kind while they fit in `limit` bytes, then hands them to
// `insert` oldest first, so the newest become the most recently used.
template <typename Record, typename Scan, typename Size, typename Insert>
Status WarmOne(size_t limit, std::chrono::steady_clock::time_point deadline, Scan scan,
               Size size_of, Insert insert, size_t* count, size_t* bytes) {
  std::vector<Record> batch;
  size_t total = 0;
  Status st = scan([&](Record r) {
    const size_t b = size_of(r);
    if (total + b > limit || std::chrono::steady_clock::now() > deadline) return false;
    total += b;
    batch.push_back(std::move(r));
    return true;
  });
  for (auto it = batch.rbegin(); it != batch.rend(); ++it) insert(std::move(*it));
  *count += batch.size();
  *bytes += total;
  return st;
}

// What is left of min(budget, capacity) once `used` bytes are cached.
size_t Room(size_t budget, size_t capacity, size_t used) {
  const size_t limit = std::min(budget, capacity);
  return limit > used ? limit - used : 0;
}

}  // namespace

Result<CacheWarmStats> WarmRecordCaches(Index& index, XorbRecordCache& xorbs,
                                        FileRecordCache& files, size_t budget_bytes,
                                        std::chrono::steady_clock::time_point deadline) {
  CacheWarmStats stats;
  if (budget_bytes == 0) return stats;
  const auto t0 = std::chrono::steady_clock::now();
  XET_RETURN_IF_ERROR(WarmOne<XorbRecord>(
      Room(budget_bytes, xorbs.capacity_bytes(), xorbs.bytes()), deadline,
      [&](const auto& visit) { return index.ForEachRecentXorb(visit); },
      XorbRecordCache::RecordBytes, [&](XorbRecord r) { xorbs.Insert(std::move(r)); }, &stats.xorbs,
      &stats.bytes));
  XET_RETURN_IF_ERROR(WarmOne<FileRecord>(
      Room(budget_bytes, files.capacity_bytes(), files.bytes()), deadline,
      [&](const auto& visit) { return index.ForEachRecentFile(visit); },
      FileRecordCache::RecordBytes,
      [&](FileRecord r) {
        stats.file_hashes.push_back(r.file_hash);
        files.Insert(std::move(r));
      },
      &stats.files, &stats.bytes));
  stats.ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return stats;
}

}  // namespace xet
