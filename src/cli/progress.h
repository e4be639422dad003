// Progress and summaries of a transfer, for every command that moves file data (cp, sync).
//
// While a transfer runs, ProgressDisplay redraws one line on stderr (only when stderr is a
// terminal and neither --quiet nor --json was given) from its own thread, reading the
// pipeline's TransferStats:
//   upload    3/12 files  512 MiB / 1.00 GiB (50%)  dedup 100 MiB  sent 300 MiB  85.2 MiB/s  ETA 6s
// "dedup" is file data the server already had (not sent); "sent" is what went over the wire
// (compressed xorbs and shards). At the end the command prints one summary (see
// PrintTransferSummary).
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "client/transfer_stats.h"
#include "common/mutex.h"

namespace xet::cli {

enum class TransferKind { kUpload, kDownload };

// A consistent-enough copy of TransferStats (each counter read once).
struct TransferSnapshot {
  uint64_t files_total = 0, files_done = 0;
  uint64_t bytes_total = 0, bytes_done = 0;
  uint64_t bytes_deduped = 0, bytes_sent = 0;
  uint64_t bytes_received = 0, bytes_from_cache = 0;
  uint64_t retries = 0;
};
TransferSnapshot Snapshot(const TransferStats& stats);

// "6s", "1m05s", "2h03m".
std::string FormatDuration(double seconds);

// The progress line (no newline, no terminal codes). `rate` is bytes per second of
// bytes_done, recent; the percentage and ETA appear only when bytes_total is known (> 0)
// and the ETA only when rate > 0.
std::string FormatProgressLine(TransferKind kind, const TransferSnapshot& s, double rate);

// The summary line:
//   uploaded 12 files, 1.00 GiB read: 300 MiB sent, 880 MiB deduplicated (86%), 3.20 s, 320 MiB/s
//   downloaded 12 files, 1.00 GiB written: 900 MiB received, 100 MiB from cache, 3.20 s, 320 MiB/s
std::string FormatSummaryLine(TransferKind kind, const TransferSnapshot& s, double seconds);
// The same as JSON: {"operation": "upload"|"download", "files", "bytes", "seconds",
// "retries", and for uploads "bytes_sent", "bytes_deduplicated", "dedup_ratio" (deduplicated
// / read, 0 when nothing was read), for downloads "bytes_received", "bytes_from_cache"}.
nlohmann::json SummaryJson(TransferKind kind, const TransferSnapshot& s, double seconds);

// --quiet / --json of a transfer command.
struct OutputFlags {
  bool quiet = false;  // no progress, no summary, no per-file lines; errors only
  bool json = false;   // no progress; the summary as one JSON object
};
void AddOutputFlags(CLI::App* cmd, OutputFlags* flags);

// Prints the summary per `flags`: nothing when quiet; SummaryJson as one line on `json_out`
// with --json; else FormatSummaryLine on stderr.
void PrintTransferSummary(const OutputFlags& flags, TransferKind kind, const TransferSnapshot& s,
                          double seconds, std::FILE* json_out);

class ProgressDisplay {
 public:
  // Starts redrawing when `enabled` (see ShouldShowProgress); otherwise only keeps time.
  ProgressDisplay(const TransferStats& stats, TransferKind kind, bool enabled);
  ~ProgressDisplay();  // Stop()
  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;

  // Stops redrawing and erases the line. Idempotent.
  void Stop();
  // Seconds since construction.
  double ElapsedSeconds() const;

 private:
  void Run();

  const TransferStats& stats_;
  const TransferKind kind_;
  const std::chrono::steady_clock::time_point start_;
  Mutex mu_;
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

// Progress is drawn only on a terminal, and not with --quiet or --json.
bool ShouldShowProgress(const OutputFlags& flags);

}  // namespace xet::cli
