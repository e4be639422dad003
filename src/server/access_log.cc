#include "server/access_log.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

namespace xet {
namespace {

std::string Iso8601Millis(std::chrono::system_clock::time_point time) {
  auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
  std::time_t seconds = static_cast<std::time_t>(millis / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(millis % 1000));
  return buf;
}

}  // namespace

AccessLogSink StderrAccessLogSink() {
  return [](std::string_view line) {
    std::string buf;
    buf.reserve(line.size() + 1);
    buf.append(line);
    buf.push_back('\n');
    // One write(2): lines from concurrent requests never interleave.
    ssize_t ignored = ::write(STDERR_FILENO, buf.data(), buf.size());
    (void)ignored;
  };
}

std::string FormatAccessLogLine(const AccessLogEntry& entry) {
  nlohmann::ordered_json line = {
      {"ts", Iso8601Millis(entry.time)},
      {"remote", std::string(entry.remote)},
      {"method", std::string(entry.method)},
      {"path", std::string(entry.target)},
      {"route", std::string(entry.route)},
      {"status", entry.status},
      {"bytes_in", entry.bytes_in},
      {"bytes_out", entry.bytes_out},
      {"duration_ms",
       static_cast<double>(entry.duration.count() / 1000) / 1000.0},  // microsecond precision
  };
  if (!entry.error.empty()) line["error"] = std::string(entry.error);
  return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace xet
