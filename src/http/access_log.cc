#include "http/access_log.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "common/ascii.h"

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

bool IsCredentialName(std::string_view name) {
  for (std::string_view word : {std::string_view("signature"), std::string_view("token")}) {
    for (size_t i = 0; i + word.size() <= name.size(); ++i) {
      if (EqualsIgnoreAsciiCase(name.substr(i, word.size()), word)) return true;
    }
  }
  return false;
}

}  // namespace

std::string RedactTarget(std::string_view target) {
  const size_t question = target.find('?');
  if (question == std::string_view::npos) return std::string(target);
  std::string out(target.substr(0, question + 1));
  std::string_view query = target.substr(question + 1);
  while (true) {
    const size_t amp = query.find('&');
    std::string_view param = query.substr(0, amp);
    const size_t eq = param.find('=');
    if (eq != std::string_view::npos && IsCredentialName(param.substr(0, eq))) {
      out.append(param.substr(0, eq + 1)).append("REDACTED");
    } else {
      out.append(param);
    }
    if (amp == std::string_view::npos) break;
    out.push_back('&');
    query.remove_prefix(amp + 1);
  }
  return out;
}

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
      {"path", RedactTarget(entry.target)},
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
