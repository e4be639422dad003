// The access log: one JSON line per answered request.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace xet {

// Receives each access-log line (without a trailing newline). Called concurrently from
// the server's I/O threads: a sink must be thread-safe.
using AccessLogSink = std::function<void(std::string_view line)>;

// Writes each line plus '\n' to stderr with one write call (lines never interleave).
AccessLogSink StderrAccessLogSink();

struct AccessLogEntry {
  std::chrono::system_clock::time_point time;  // when the request's headers were read
  std::string_view remote;                     // "ip:port"
  std::string_view method;
  std::string_view target;  // path and query as sent
  std::string_view route;   // the route name, "" when no route matched
  int status = 0;
  uint64_t bytes_in = 0;   // request body bytes
  uint64_t bytes_out = 0;  // response bytes on the wire, headers included
  std::chrono::nanoseconds duration{0};
  std::string_view error;  // why the server answered 500 itself (a handler threw), if so
};

// Query parameters that carry credentials are redacted in `path`: the value of any
// parameter whose name contains "signature" or "token" (ASCII case-insensitive) is
// replaced by "REDACTED", so a log reader cannot replay a signed URL.
//
// {"ts":"2024-05-01T12:00:00.123Z","remote":"127.0.0.1:5000","method":"GET",
//  "path":"/healthz","route":"healthz","status":200,"bytes_in":0,"bytes_out":89,
//  "duration_ms":0.123}  (plus "error":"..." when set)
std::string FormatAccessLogLine(const AccessLogEntry& entry);

// `target` with the credential-bearing query values redacted (see above); the rest of the
// target, including its percent-encoding and parameter order, is kept byte for byte.
std::string RedactTarget(std::string_view target);

}  // namespace xet
