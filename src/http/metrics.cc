#include "http/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace xet {
namespace {

constexpr double kLatencyBuckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                      0.25,   0.5,   1,      2.5,   5,    10,    30,   60};

bool ValidName(std::string_view name, bool allow_colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              (allow_colon && c == ':') || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

void AppendEscaped(std::string* out, std::string_view value, bool escape_quotes) {
  for (char c : value) {
    if (c == '\\') {
      *out += "\\\\";
    } else if (c == '\n') {
      *out += "\\n";
    } else if (c == '"' && escape_quotes) {
      *out += "\\\"";
    } else {
      out->push_back(c);
    }
  }
}

// Renders labels as `a="x",b="y"` sorted by name; empty string when a name is invalid
// (reported through `valid`).
std::string RenderLabels(MetricLabels labels, bool* valid) {
  std::sort(labels.begin(), labels.end());
  std::string out;
  *valid = true;
  for (const auto& [name, value] : labels) {
    if (!ValidName(name, /*allow_colon=*/false) || name == "le") *valid = false;
    if (!out.empty()) out += ',';
    out += name;
    out += "=\"";
    AppendEscaped(&out, value, /*escape_quotes=*/true);
    out += '"';
  }
  return out;
}

std::string FormatDouble(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  // Prefer the shortest representation that round-trips.
  for (int precision = 1; precision < 17; ++precision) {
    char shorter[64];
    std::snprintf(shorter, sizeof shorter, "%.*g", precision, v);
    if (std::strtod(shorter, nullptr) == v) return shorter;
  }
  return buf;
}

// `name{labels,extra}` or `name{extra}` or `name`.
void AppendSeries(std::string* out, std::string_view name, const std::string& labels,
                  std::string_view extra = {}) {
  *out += name;
  if (!labels.empty() || !extra.empty()) {
    *out += '{';
    *out += labels;
    if (!labels.empty() && !extra.empty()) *out += ',';
    *out += extra;
    *out += '}';
  }
  *out += ' ';
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds) : upper_bounds_(std::move(upper_bounds)) {
  std::sort(upper_bounds_.begin(), upper_bounds_.end());
  upper_bounds_.erase(std::unique(upper_bounds_.begin(), upper_bounds_.end()), upper_bounds_.end());
  if (!upper_bounds_.empty() && std::isinf(upper_bounds_.back())) upper_bounds_.pop_back();
  buckets_ = std::make_unique<std::atomic<uint64_t>[]>(upper_bounds_.size() + 1);
  for (size_t i = 0; i <= upper_bounds_.size(); ++i) buckets_[i].store(0);
}

void Histogram::Observe(double value) {
  size_t i = static_cast<size_t>(
      std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), value) - upper_bounds_.begin());
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

std::vector<uint64_t> Histogram::BucketCounts() const {
  std::vector<uint64_t> out(upper_bounds_.size() + 1);
  for (size_t i = 0; i < out.size(); ++i) out[i] = buckets_[i].load(std::memory_order_relaxed);
  return out;
}

std::span<const double> DefaultLatencyBuckets() { return kLatencyBuckets; }

Metrics::Family* Metrics::FamilyFor(std::string_view name, std::string_view help, Type type) {
  if (!ValidName(name, /*allow_colon=*/true)) return nullptr;
  auto it = families_.find(name);
  if (it == families_.end()) {
    it =
        families_.emplace(std::string(name), Family{type, std::string(help), {}, {}, {}, {}}).first;
  }
  return it->second.type == type ? &it->second : nullptr;
}

Counter& Metrics::GetCounter(std::string_view name, std::string_view help, MetricLabels labels) {
  bool valid = false;
  std::string key = RenderLabels(std::move(labels), &valid);
  MutexLock lock(mu_);
  Family* family = valid ? FamilyFor(name, help, Type::kCounter) : nullptr;
  if (family == nullptr) {
    return *orphan_counters_.emplace_back(std::make_unique<Counter>());
  }
  auto it = family->counters.find(key);
  if (it == family->counters.end()) {
    it = family->counters.emplace(std::move(key), std::make_unique<Counter>()).first;
  }
  return *it->second;
}

Gauge& Metrics::GetGauge(std::string_view name, std::string_view help, MetricLabels labels) {
  bool valid = false;
  std::string key = RenderLabels(std::move(labels), &valid);
  MutexLock lock(mu_);
  Family* family = valid ? FamilyFor(name, help, Type::kGauge) : nullptr;
  if (family == nullptr) {
    return *orphan_gauges_.emplace_back(std::make_unique<Gauge>());
  }
  auto it = family->gauges.find(key);
  if (it == family->gauges.end()) {
    it = family->gauges.emplace(std::move(key), std::make_unique<Gauge>()).first;
  }
  return *it->second;
}

Histogram& Metrics::GetHistogram(std::string_view name, std::string_view help, MetricLabels labels,
                                 std::span<const double> upper_bounds) {
  bool valid = false;
  std::string key = RenderLabels(std::move(labels), &valid);
  MutexLock lock(mu_);
  Family* family = valid ? FamilyFor(name, help, Type::kHistogram) : nullptr;
  if (family == nullptr) {
    return *orphan_histograms_.emplace_back(
        std::make_unique<Histogram>(std::vector<double>(upper_bounds.begin(), upper_bounds.end())));
  }
  if (family->histograms.empty() && family->upper_bounds.empty()) {
    family->upper_bounds.assign(upper_bounds.begin(), upper_bounds.end());
  }
  auto it = family->histograms.find(key);
  if (it == family->histograms.end()) {
    it = family->histograms
             .emplace(std::move(key), std::make_unique<Histogram>(family->upper_bounds))
             .first;
  }
  return *it->second;
}

void Metrics::AddCollector(std::function<void()> collect) {
  MutexLock lock(mu_);
  collectors_.push_back(std::move(collect));
}

std::string Metrics::Expose() const {
  std::vector<std::function<void()>> collectors;
  {
    MutexLock lock(mu_);
    collectors = collectors_;
  }
  for (const auto& collect : collectors) collect();
  std::string out;
  MutexLock lock(mu_);
  for (const auto& [name, family] : families_) {
    out += "# HELP ";
    out += name;
    out += ' ';
    AppendEscaped(&out, family.help, /*escape_quotes=*/false);
    out += "\n# TYPE ";
    out += name;
    switch (family.type) {
      case Type::kCounter:
        out += " counter\n";
        for (const auto& [labels, counter] : family.counters) {
          AppendSeries(&out, name, labels);
          out += std::to_string(counter->Value());
          out += '\n';
        }
        break;
      case Type::kGauge:
        out += " gauge\n";
        for (const auto& [labels, gauge] : family.gauges) {
          AppendSeries(&out, name, labels);
          out += std::to_string(gauge->Value());
          out += '\n';
        }
        break;
      case Type::kHistogram: {
        out += " histogram\n";
        const std::string bucket_name = name + "_bucket";
        for (const auto& [labels, histogram] : family.histograms) {
          std::vector<uint64_t> counts = histogram->BucketCounts();
          uint64_t cumulative = 0;
          for (size_t i = 0; i < counts.size(); ++i) {
            cumulative += counts[i];
            double bound = i < histogram->upper_bounds().size()
                               ? histogram->upper_bounds()[i]
                               : std::numeric_limits<double>::infinity();
            AppendSeries(&out, bucket_name, labels, "le=\"" + FormatDouble(bound) + "\"");
            out += std::to_string(cumulative);
            out += '\n';
          }
          AppendSeries(&out, name + "_sum", labels);
          out += FormatDouble(histogram->Sum());
          out += '\n';
          AppendSeries(&out, name + "_count", labels);
          // The +Inf bucket and _count must agree even while observations race.
          out += std::to_string(cumulative);
          out += '\n';
        }
        break;
      }
    }
  }
  return out;
}

}  // namespace xet
