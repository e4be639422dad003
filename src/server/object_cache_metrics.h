// The node's object cache (store/cache/cached_object_store.h) on /metrics:
//   xetstore_object_cache_reads_total{result="hit"|"bypass"}  reads served from a copy, and
//       reads sent to the remote store (object too large, copies at their limit, a failed
//       or paused copy)
//   xetstore_object_cache_fills_total, xetstore_object_cache_fill_bytes_total,
//   xetstore_object_cache_fill_errors_total, xetstore_object_cache_evictions_total
//   xetstore_object_cache_entries, xetstore_object_cache_bytes  (gauges: what it holds now)
// The values are read from the cache each time /metrics is served.
#pragma once

#include "http/metrics.h"
#include "store/cache/cached_object_store.h"

namespace xet {

// `cache` and `metrics` must outlive each other's use: the registry keeps a collector that
// reads `cache`.
void ExportObjectCacheMetrics(const ObjectCache& cache, Metrics& metrics);

}  // namespace xet
