#include "http/metrics.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace xet {
namespace {

TEST(MetricsTest, CountersAreSharedByNameAndLabels) {
  Metrics metrics;
  Counter& a = metrics.GetCounter("xet_hits_total", "Hits.", {{"kind", "dedup"}});
  Counter& b = metrics.GetCounter("xet_hits_total", "Hits.", {{"kind", "dedup"}});
  Counter& c = metrics.GetCounter("xet_hits_total", "Hits.", {{"kind", "other"}});
  EXPECT_EQ(&a, &b);
  EXPECT_NE(&a, &c);
  a.Increment();
  b.Increment(4);
  EXPECT_EQ(a.Value(), 5u);
  EXPECT_EQ(c.Value(), 0u);
}

TEST(MetricsTest, LabelOrderDoesNotMatter) {
  Metrics metrics;
  Counter& a = metrics.GetCounter("xet_t_total", "T.", {{"a", "1"}, {"b", "2"}});
  Counter& b = metrics.GetCounter("xet_t_total", "T.", {{"b", "2"}, {"a", "1"}});
  EXPECT_EQ(&a, &b);
}

// A collector runs before every exposition, so what it sets is what is exposed; it may
// register metrics itself (it runs without the registry's lock).
TEST(MetricsTest, CollectorsRunBeforeEachExposition) {
  Metrics metrics;
  int source = 0;
  int runs = 0;
  metrics.AddCollector([&] {
    ++runs;
    metrics.GetGauge("xet_source", "Mirrors a value kept elsewhere.").Set(source);
  });
  source = 7;
  EXPECT_NE(metrics.Expose().find("xet_source 7\n"), std::string::npos);
  source = 9;
  EXPECT_NE(metrics.Expose().find("xet_source 9\n"), std::string::npos);
  EXPECT_EQ(runs, 2);
}

TEST(MetricsTest, ExposesPrometheusText) {
  Metrics metrics;
  metrics.GetCounter("xet_requests_total", "Requests served.", {{"route", "a"}}).Increment(3);
  metrics.GetGauge("xet_open", "Open things.").Set(-2);
  Histogram& h = metrics.GetHistogram("xet_latency_seconds", "Latency.", {{"route", "a"}},
                                      std::vector<double>{0.1, 1});
  h.Observe(0.0625);
  h.Observe(0.5);
  h.Observe(4);
  std::string text = metrics.Expose();
  EXPECT_NE(text.find("# HELP xet_requests_total Requests served.\n"
                      "# TYPE xet_requests_total counter\n"
                      "xet_requests_total{route=\"a\"} 3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE xet_open gauge\nxet_open -2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE xet_latency_seconds histogram\n"
                      "xet_latency_seconds_bucket{route=\"a\",le=\"0.1\"} 1\n"
                      "xet_latency_seconds_bucket{route=\"a\",le=\"1\"} 2\n"
                      "xet_latency_seconds_bucket{route=\"a\",le=\"+Inf\"} 3\n"
                      "xet_latency_seconds_sum{route=\"a\"} 4.5625\n"
                      "xet_latency_seconds_count{route=\"a\"} 3\n"),
            std::string::npos)
      << text;
  // Families are sorted by name.
  EXPECT_LT(text.find("xet_latency_seconds"), text.find("xet_open"));
  EXPECT_LT(text.find("xet_open"), text.find("xet_requests_total"));
}

TEST(MetricsTest, EscapesLabelValuesAndHelp) {
  Metrics metrics;
  metrics.GetCounter("xet_e_total", "Line one\nback\\slash", {{"path", "a\"b\\c\nd"}}).Increment();
  std::string text = metrics.Expose();
  EXPECT_NE(text.find("# HELP xet_e_total Line one\\nback\\\\slash\n"), std::string::npos);
  EXPECT_NE(text.find("xet_e_total{path=\"a\\\"b\\\\c\\nd\"} 1\n"), std::string::npos) << text;
}

TEST(MetricsTest, InvalidNamesAndTypeClashesAreNotExported) {
  Metrics metrics;
  metrics.GetCounter("xet_clash", "A counter.").Increment();
  Gauge& gauge = metrics.GetGauge("xet_clash", "Now a gauge?");
  gauge.Set(7);  // usable, but not exported
  EXPECT_EQ(gauge.Value(), 7);
  metrics.GetCounter("bad name", "Bad.").Increment();
  metrics.GetCounter("xet_ok_total", "Bad label.", {{"bad-label", "x"}}).Increment();
  std::string text = metrics.Expose();
  EXPECT_NE(text.find("xet_clash 1\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("xet_clash 7"), std::string::npos) << text;
  EXPECT_EQ(text.find("bad"), std::string::npos) << text;
}

TEST(MetricsTest, ConcurrentUpdatesAreCounted) {
  Metrics metrics;
  constexpr int kThreads = 4;
  constexpr int kPerThread = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        metrics.GetCounter("xet_c_total", "C.", {{"t", "x"}}).Increment();
        metrics.GetHistogram("xet_h_seconds", "H.").Observe(0.001);
        metrics.GetGauge("xet_g", "G.").Add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(metrics.GetCounter("xet_c_total", "C.", {{"t", "x"}}).Value(),
            uint64_t{kThreads * kPerThread});
  EXPECT_EQ(metrics.GetHistogram("xet_h_seconds", "H.").Count(), uint64_t{kThreads * kPerThread});
  EXPECT_EQ(metrics.GetGauge("xet_g", "G.").Value(), kThreads * kPerThread);
}

TEST(MetricsTest, HistogramBucketsAreUpperInclusive) {
  Histogram h({1, 2, 3});
  h.Observe(1);
  h.Observe(1.5);
  h.Observe(3);
  h.Observe(100);
  EXPECT_EQ(h.BucketCounts(), (std::vector<uint64_t>{1, 1, 1, 1}));
  EXPECT_EQ(h.Count(), 4u);
  EXPECT_DOUBLE_EQ(h.Sum(), 105.5);
}

}  // namespace
}  // namespace xet
