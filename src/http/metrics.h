// A small thread-safe metrics registry with Prometheus text exposition (format 0.0.4).
//
// Handlers and the server register counters, gauges and histograms by name and labels;
// the returned references stay valid for the registry's lifetime, so hot paths look a
// metric up once and then only touch atomics:
//
//   Counter& hits = metrics.GetCounter("xetstore_dedup_hits_total", "Dedup hits.");
//   hits.Increment();
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/mutex.h"

namespace xet {

// Label name -> value pairs; order does not matter (they are sorted by name).
using MetricLabels = std::vector<std::pair<std::string, std::string>>;

class Counter {
 public:
  void Increment(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

class Gauge {
 public:
  void Set(int64_t v) { value_.store(v, std::memory_order_relaxed); }
  void Add(int64_t delta) { value_.fetch_add(delta, std::memory_order_relaxed); }
  int64_t Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> value_{0};
};

// Observations counted into buckets with fixed, ascending upper bounds (an implicit
// +Inf bucket follows the last).
class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void Observe(double value);

  const std::vector<double>& upper_bounds() const { return upper_bounds_; }
  // Per-bucket (not cumulative) counts, one more than upper_bounds() (the +Inf bucket).
  std::vector<uint64_t> BucketCounts() const;
  uint64_t Count() const { return count_.load(std::memory_order_relaxed); }
  double Sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> upper_bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;
  std::atomic<uint64_t> count_{0};
  std::atomic<double> sum_{0.0};
};

// Bucket bounds in seconds suited to request latencies: 0.5 ms .. 60 s.
std::span<const double> DefaultLatencyBuckets();

class Metrics {
 public:
  Metrics() = default;
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // Each Get* returns the metric with this name and labels, creating it (and its family,
  // with `help`) on first use. Names must match [a-zA-Z_:][a-zA-Z0-9_:]* and label names
  // [a-zA-Z_][a-zA-Z0-9_]*. Asking for a name already registered as another type, or an
  // invalid name, is a programming error: the call returns a working metric that is not
  // exported.
  Counter& GetCounter(std::string_view name, std::string_view help, MetricLabels labels = {});
  Gauge& GetGauge(std::string_view name, std::string_view help, MetricLabels labels = {});
  // `upper_bounds` is used when the family is created; later calls share the family's.
  Histogram& GetHistogram(std::string_view name, std::string_view help, MetricLabels labels = {},
                          std::span<const double> upper_bounds = DefaultLatencyBuckets());

  // Registers `collect`, run (without the registry's lock) at the start of every Expose():
  // it brings metrics whose source keeps its own counts up to date. It may run on several
  // threads at once and must stay valid as long as the registry.
  void AddCollector(std::function<void()> collect);

  // Every metric in Prometheus text format, families sorted by name.
  std::string Expose() const;

 private:
  enum class Type { kCounter, kGauge, kHistogram };
  struct Family {
    Type type;
    std::string help;
    std::vector<double> upper_bounds;  // histograms
    // Keyed by the rendered label set, e.g. `route="x",code="2xx"`.
    std::map<std::string, std::unique_ptr<Counter>, std::less<>> counters;
    std::map<std::string, std::unique_ptr<Gauge>, std::less<>> gauges;
    std::map<std::string, std::unique_ptr<Histogram>, std::less<>> histograms;
  };
  // The family for `name`, created if absent; null when the name is invalid or of
  // another type.
  Family* FamilyFor(std::string_view name, std::string_view help, Type type) REQUIRES(mu_);

  mutable Mutex mu_;
  std::map<std::string, Family, std::less<>> families_ GUARDED_BY(mu_);
  std::vector<std::function<void()>> collectors_ GUARDED_BY(mu_);
  // Metrics handed out for invalid requests; kept alive, never exported.
  std::vector<std::unique_ptr<Counter>> orphan_counters_ GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Gauge>> orphan_gauges_ GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Histogram>> orphan_histograms_ GUARDED_BY(mu_);
};

}  // namespace xet
