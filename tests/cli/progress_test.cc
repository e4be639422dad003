// The progress line and transfer summaries of the CLI (cli/progress.h).
#include "cli/progress.h"

#include <gtest/gtest.h>

namespace xet::cli {
namespace {

TEST(CliProgress, FormatDuration) {
  EXPECT_EQ(FormatDuration(0), "0s");
  EXPECT_EQ(FormatDuration(6.4), "6s");
  EXPECT_EQ(FormatDuration(59.4), "59s");
  EXPECT_EQ(FormatDuration(65), "1m05s");
  EXPECT_EQ(FormatDuration(3599), "59m59s");
  EXPECT_EQ(FormatDuration(3600 * 2 + 3 * 60 + 10), "2h03m");
  EXPECT_EQ(FormatDuration(-5), "0s");
}

TEST(CliProgress, UploadLineShowsDedupSeparatelyFromSent) {
  TransferSnapshot s;
  s.files_total = 12;
  s.files_done = 3;
  s.bytes_total = 1ull << 30;  // 1 GiB
  s.bytes_done = 512ull << 20;
  s.bytes_deduped = 100ull << 20;
  s.bytes_sent = 300ull << 20;
  // 512 MiB left at 64 MiB/s: 8 s.
  EXPECT_EQ(FormatProgressLine(TransferKind::kUpload, s, 64.0 * (1 << 20)),
            "upload  3/12 files  512 MiB / 1.00 GiB (50%)  dedup 100 MiB  sent 300 MiB  "
            "64.0 MiB/s  ETA 8s");
}

TEST(CliProgress, UnknownTotalHasNoPercentOrEta) {
  TransferSnapshot s;
  s.files_total = 1;
  s.bytes_done = 2048;
  EXPECT_EQ(FormatProgressLine(TransferKind::kUpload, s, 1024),
            "upload  0/1 files  2.00 KiB  dedup 0 B  sent 0 B  1.00 KiB/s");
}

TEST(CliProgress, NoEtaWithoutRateAndRetriesShown) {
  TransferSnapshot s;
  s.files_total = 2;
  s.bytes_total = 100;
  s.retries = 3;
  EXPECT_EQ(FormatProgressLine(TransferKind::kUpload, s, 0),
            "upload  0/2 files  0 B / 100 B (0%)  dedup 0 B  sent 0 B  0 B/s  retries 3");
}

TEST(CliProgress, DownloadLine) {
  TransferSnapshot s;
  s.files_total = 1;
  s.bytes_total = 4096;
  s.bytes_done = 1024;
  s.bytes_received = 1000;
  s.bytes_from_cache = 24;
  EXPECT_EQ(FormatProgressLine(TransferKind::kDownload, s, 1024),
            "download  0/1 files  1.00 KiB / 4.00 KiB (25%)  received 1000 B  cache 24 B  "
            "1.00 KiB/s  ETA 3s");
}

TEST(CliProgress, UploadSummary) {
  TransferSnapshot s;
  s.files_done = 12;
  s.bytes_done = 1ull << 30;
  s.bytes_sent = 300ull << 20;
  s.bytes_deduped = 768ull << 20;  // 75 %
  EXPECT_EQ(FormatSummaryLine(TransferKind::kUpload, s, 4.0),
            "uploaded 12 files, 1.00 GiB read: 300 MiB sent, 768 MiB deduplicated (75%), "
            "4.00 s, 256 MiB/s");
  s.files_done = 1;
  s.retries = 2;
  EXPECT_EQ(FormatSummaryLine(TransferKind::kUpload, s, 4.0),
            "uploaded 1 file, 1.00 GiB read: 300 MiB sent, 768 MiB deduplicated (75%), 4.00 s, "
            "256 MiB/s, 2 retries");
}

TEST(CliProgress, EmptyUploadSummaryHasNoDivisionByZero) {
  TransferSnapshot s;
  EXPECT_EQ(FormatSummaryLine(TransferKind::kUpload, s, 0),
            "uploaded 0 files, 0 B read: 0 B sent, 0 B deduplicated (0%), 0.00 s, 0 B/s");
  const auto j = SummaryJson(TransferKind::kUpload, s, 0);
  EXPECT_EQ(j["dedup_ratio"], 0.0);
}

TEST(CliProgress, DownloadSummaryAndJson) {
  TransferSnapshot s;
  s.files_done = 2;
  s.bytes_done = 2048;
  s.bytes_received = 1500;
  s.bytes_from_cache = 548;
  EXPECT_EQ(FormatSummaryLine(TransferKind::kDownload, s, 2.0),
            "downloaded 2 files, 2.00 KiB written: 1.46 KiB received, 548 B from cache, 2.00 s, "
            "1.00 KiB/s");
  const auto j = SummaryJson(TransferKind::kDownload, s, 2.0);
  EXPECT_EQ(j, (nlohmann::json{{"operation", "download"},
                               {"files", 2},
                               {"bytes", 2048},
                               {"seconds", 2.0},
                               {"retries", 0},
                               {"bytes_received", 1500},
                               {"bytes_from_cache", 548}}));
}

TEST(CliProgress, UploadJson) {
  TransferSnapshot s;
  s.files_done = 1;
  s.bytes_done = 1000;
  s.bytes_deduped = 250;
  s.bytes_sent = 800;
  const auto j = SummaryJson(TransferKind::kUpload, s, 0.5);
  EXPECT_EQ(j, (nlohmann::json{{"operation", "upload"},
                               {"files", 1},
                               {"bytes", 1000},
                               {"seconds", 0.5},
                               {"retries", 0},
                               {"bytes_sent", 800},
                               {"bytes_deduplicated", 250},
                               {"dedup_ratio", 0.25}}));
}

TEST(CliProgress, SnapshotCopiesEveryCounter) {
  TransferStats stats;
  stats.files_total = 1;
  stats.files_done = 2;
  stats.bytes_total = 3;
  stats.bytes_done = 4;
  stats.bytes_deduped = 5;
  stats.bytes_sent = 6;
  stats.bytes_received = 7;
  stats.bytes_from_cache = 8;
  stats.retries = 9;
  const TransferSnapshot s = Snapshot(stats);
  EXPECT_EQ(s.files_total, 1u);
  EXPECT_EQ(s.files_done, 2u);
  EXPECT_EQ(s.bytes_total, 3u);
  EXPECT_EQ(s.bytes_done, 4u);
  EXPECT_EQ(s.bytes_deduped, 5u);
  EXPECT_EQ(s.bytes_sent, 6u);
  EXPECT_EQ(s.bytes_received, 7u);
  EXPECT_EQ(s.bytes_from_cache, 8u);
  EXPECT_EQ(s.retries, 9u);
}

TEST(CliProgress, DisplayWithoutTerminalDrawsNothingAndKeepsTime) {
  TransferStats stats;
  ProgressDisplay display(stats, TransferKind::kUpload, /*enabled=*/false);
  EXPECT_GE(display.ElapsedSeconds(), 0.0);
  display.Stop();
  display.Stop();  // idempotent
}

}  // namespace
}  // namespace xet::cli
