#include "server/object_cache_metrics.h"

#include <cstdint>
#include <memory>

#include "common/mutex.h"

namespace xet {
namespace {

// A counter that follows a total kept elsewhere: each update adds what the total grew by.
class FollowedCounter {
 public:
  explicit FollowedCounter(Counter& counter) : counter_(counter) {}
  void Follow(uint64_t total) {
    if (total > seen_) counter_.Increment(total - seen_);
    seen_ = total;
  }

 private:
  Counter& counter_;
  uint64_t seen_ = 0;
};

struct CacheMetrics {
  explicit CacheMetrics(Metrics& m)
      : hits(m.GetCounter("xetstore_object_cache_reads_total",
                          "Reads of the node's object cache, by whether a local copy served them.",
                          {{"result", "hit"}})),
        bypasses(m.GetCounter("xetstore_object_cache_reads_total",
                              "Reads of the node's object cache, by whether a local copy served "
                              "them.",
                              {{"result", "bypass"}})),
        fills(m.GetCounter("xetstore_object_cache_fills_total",
                           "Objects copied from the object store into the node's cache.")),
        fill_bytes(m.GetCounter("xetstore_object_cache_fill_bytes_total",
                                "Bytes copied from the object store into the node's cache.")),
        fill_errors(m.GetCounter("xetstore_object_cache_fill_errors_total",
                                 "Copies into the node's object cache that failed.")),
        evictions(m.GetCounter("xetstore_object_cache_evictions_total",
                               "Copies evicted from the node's object cache to make room.")),
        entries(
            m.GetGauge("xetstore_object_cache_entries", "Objects the node's object cache holds.")),
        bytes(m.GetGauge("xetstore_object_cache_bytes",
                         "Bytes of the objects the node's object cache holds.")) {}

  Mutex mu;  // collectors may run on several threads at once
  FollowedCounter hits GUARDED_BY(mu);
  FollowedCounter bypasses GUARDED_BY(mu);
  FollowedCounter fills GUARDED_BY(mu);
  FollowedCounter fill_bytes GUARDED_BY(mu);
  FollowedCounter fill_errors GUARDED_BY(mu);
  FollowedCounter evictions GUARDED_BY(mu);
  Gauge& entries;
  Gauge& bytes;
};

}  // namespace

void ExportObjectCacheMetrics(const ObjectCache& cache, Metrics& metrics) {
  auto m = std::make_shared<CacheMetrics>(metrics);
  metrics.AddCollector([&cache, m] {
    const ObjectCacheStats s = cache.Stats();
    MutexLock lock(m->mu);
    m->hits.Follow(s.hits);
    m->bypasses.Follow(s.bypasses);
    m->fills.Follow(s.fills);
    m->fill_bytes.Follow(s.fill_bytes);
    m->fill_errors.Follow(s.fill_errors);
    m->evictions.Follow(s.evictions);
    m->entries.Set(static_cast<int64_t>(s.entries));
    m->bytes.Set(static_cast<int64_t>(s.bytes));
  });
}

}  // namespace xet
