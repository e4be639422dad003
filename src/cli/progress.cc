#include "cli/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>
#include <deque>
#include <utility>

#include "cli/output.h"
#include "common/human_bytes.h"

namespace xet::cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kRedrawInterval = std::chrono::milliseconds(200);
constexpr auto kRateWindow = std::chrono::seconds(5);  // the rate is over this recent window

std::string Rate(double bytes_per_second) {
  const double r = std::max(0.0, bytes_per_second);
  return HumanBytes(static_cast<uint64_t>(std::llround(r))) + "/s";
}

std::string Percent(uint64_t part, uint64_t whole) {
  if (whole == 0) return "0%";
  const double pct = 100.0 * static_cast<double>(part) / static_cast<double>(whole);
  return std::to_string(static_cast<int>(std::floor(std::min(pct, 100.0)))) + "%";
}

// The terminal's width in columns (0 when unknown).
size_t TerminalColumns() {
  winsize ws{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) != 0) return 0;
  return ws.ws_col;
}

const char* KindName(TransferKind kind) {
  return kind == TransferKind::kUpload ? "upload" : "download";
}

}  // namespace

TransferSnapshot Snapshot(const TransferStats& stats) {
  TransferSnapshot s;
  s.files_total = stats.files_total.load();
  s.files_done = stats.files_done.load();
  s.bytes_total = stats.bytes_total.load();
  s.bytes_done = stats.bytes_done.load();
  s.bytes_deduped = stats.bytes_deduped.load();
  s.bytes_sent = stats.bytes_sent.load();
  s.bytes_received = stats.bytes_received.load();
  s.bytes_from_cache = stats.bytes_from_cache.load();
  s.retries = stats.retries.load();
  return s;
}

std::string FormatDuration(double seconds) {
  const auto total = static_cast<uint64_t>(std::llround(std::max(0.0, seconds)));
  char buf[32];
  if (total < 60) {
    std::snprintf(buf, sizeof(buf), "%llus", static_cast<unsigned long long>(total));
  } else if (total < 3600) {
    std::snprintf(buf, sizeof(buf), "%llum%02llus", static_cast<unsigned long long>(total / 60),
                  static_cast<unsigned long long>(total % 60));
  } else {
    std::snprintf(buf, sizeof(buf), "%lluh%02llum", static_cast<unsigned long long>(total / 3600),
                  static_cast<unsigned long long>(total / 60 % 60));
  }
  return buf;
}

std::string FormatProgressLine(TransferKind kind, const TransferSnapshot& s, double rate) {
  std::string line = std::string(KindName(kind)) + "  " + std::to_string(s.files_done) + "/" +
                     std::to_string(s.files_total) + " files  " + HumanBytes(s.bytes_done);
  if (s.bytes_total > 0) {
    line += " / " + HumanBytes(s.bytes_total) + " (" + Percent(s.bytes_done, s.bytes_total) + ")";
  }
  if (kind == TransferKind::kUpload) {
    line += "  dedup " + HumanBytes(s.bytes_deduped) + "  sent " + HumanBytes(s.bytes_sent);
  } else {
    line += "  received " + HumanBytes(s.bytes_received);
    if (s.bytes_from_cache > 0) line += "  cache " + HumanBytes(s.bytes_from_cache);
  }
  line += "  " + Rate(rate);
  if (s.bytes_total > s.bytes_done && rate > 0) {
    line += "  ETA " + FormatDuration(static_cast<double>(s.bytes_total - s.bytes_done) / rate);
  }
  if (s.retries > 0) line += "  retries " + std::to_string(s.retries);
  return line;
}

std::string FormatSummaryLine(TransferKind kind, const TransferSnapshot& s, double seconds) {
  const std::string files =
      std::to_string(s.files_done) + (s.files_done == 1 ? " file, " : " files, ");
  char secs[32];
  std::snprintf(secs, sizeof(secs), "%.2f s", seconds);
  const double rate = seconds > 0 ? static_cast<double>(s.bytes_done) / seconds : 0;
  std::string line;
  if (kind == TransferKind::kUpload) {
    line = "uploaded " + files + HumanBytes(s.bytes_done) + " read: " + HumanBytes(s.bytes_sent) +
           " sent, " + HumanBytes(s.bytes_deduped) + " deduplicated (" +
           Percent(s.bytes_deduped, s.bytes_done) + ")";
  } else {
    line = "downloaded " + files + HumanBytes(s.bytes_done) +
           " written: " + HumanBytes(s.bytes_received) + " received, " +
           HumanBytes(s.bytes_from_cache) + " from cache";
  }
  line += ", " + std::string(secs) + ", " + Rate(rate);
  if (s.retries > 0) line += ", " + std::to_string(s.retries) + " retries";
  return line;
}

nlohmann::json SummaryJson(TransferKind kind, const TransferSnapshot& s, double seconds) {
  nlohmann::json j = {{"operation", KindName(kind)},
                      {"files", s.files_done},
                      {"bytes", s.bytes_done},
                      {"seconds", seconds},
                      {"retries", s.retries}};
  if (kind == TransferKind::kUpload) {
    j["bytes_sent"] = s.bytes_sent;
    j["bytes_deduplicated"] = s.bytes_deduped;
    j["dedup_ratio"] = s.bytes_done == 0 ? 0.0
                                         : static_cast<double>(s.bytes_deduped) /
                                               static_cast<double>(s.bytes_done);
  } else {
    j["bytes_received"] = s.bytes_received;
    j["bytes_from_cache"] = s.bytes_from_cache;
  }
  return j;
}

void AddOutputFlags(CLI::App* cmd, OutputFlags* flags) {
  cmd->add_flag("-q,--quiet", flags->quiet, "Print nothing but errors (no progress, no summary)");
  cmd->add_flag("--json", flags->json,
                "No progress; print the summary as one JSON object (for scripts)");
}

void PrintTransferSummary(const OutputFlags& flags, TransferKind kind, const TransferSnapshot& s,
                          double seconds, std::FILE* json_out) {
  if (flags.quiet) return;
  if (flags.json) {
    std::fprintf(json_out, "%s\n", SummaryJson(kind, s, seconds).dump().c_str());
    std::fflush(json_out);
  } else {
    std::fprintf(stderr, "%s\n", FormatSummaryLine(kind, s, seconds).c_str());
  }
}

bool ShouldShowProgress(const OutputFlags& flags) {
  return !flags.quiet && !flags.json && ::isatty(STDERR_FILENO) == 1;
}

ProgressDisplay::ProgressDisplay(const TransferStats& stats, TransferKind kind, bool enabled)
    : stats_(stats), kind_(kind), start_(Clock::now()) {
  if (enabled) thread_ = std::thread([this] { Run(); });
}

ProgressDisplay::~ProgressDisplay() { Stop(); }

void ProgressDisplay::Stop() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  if (thread_.joinable()) {
    thread_.join();
    std::fputs("\r\x1b[K", stderr);  // erase the progress line
    std::fflush(stderr);
  }
}

double ProgressDisplay::ElapsedSeconds() const {
  return std::chrono::duration<double>(Clock::now() - start_).count();
}

void ProgressDisplay::Run() {
  std::deque<std::pair<Clock::time_point, uint64_t>> samples;  // (when, bytes_done)
  MutexLock lock(mu_);
  while (!stop_) {
    const auto now = Clock::now();
    const TransferSnapshot s = Snapshot(stats_);
    samples.emplace_back(now, s.bytes_done);
    while (samples.size() > 2 && now - samples.front().first > kRateWindow) samples.pop_front();
    const double span = std::chrono::duration<double>(now - samples.front().first).count();
    const double rate =
        span > 0 ? static_cast<double>(s.bytes_done - samples.front().second) / span : 0;
    std::string line = FormatProgressLine(kind_, s, rate);
    // A line wider than the terminal would wrap, and '\r' would not return to its start.
    if (const size_t cols = TerminalColumns(); cols > 1 && line.size() >= cols) {
      line.resize(cols - 1);
    }
    std::fprintf(stderr, "\r\x1b[K%s", line.c_str());
    std::fflush(stderr);
    const auto deadline = Clock::now() + kRedrawInterval;
    while (!stop_ && cv_.WaitUntil(mu_, deadline) != std::cv_status::timeout) {
    }
  }
}

}  // namespace xet::cli
