// HttpClient: the client side of HTTP for everything in client/ (libcurl underneath).
//
// Thread-safe: any number of threads call Send/Stream concurrently; each request borrows a
// curl handle from the client's pool and returns it afterwards, so connections (keep-alive)
// and TLS sessions are reused across requests. Redirects are not followed (a token is never
// sent to another host). Retries follow a RetryPolicy on the retryable classes only,
// re-sending the same body; a request that still fails answers:
//   Unavailable      the server could not be reached (connect/timeout/reset/TLS) or kept
//                    answering a retryable status — the message names the URL and the last
//                    cause;
//   InvalidArgument  the URL is malformed or its scheme unsupported (never retried);
//   ResourceExhausted a buffered body exceeded HttpClientOptions::max_response_bytes;
//   Cancelled        a StreamCallbacks::sink returned false;
//   OK + status      any other HTTP answer, including 4xx (the caller maps it, see
//                    StatusFromResponse).
// libcurl's process-wide curl_global_init runs once, from a function-local static, the first
// time an HttpClient is constructed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "client/transport/retry_policy.h"
#include "common/result.h"

namespace xet {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct ClientRequest {
  std::string method = "GET";
  std::string url;
  HeaderList headers;
  std::span<const uint8_t> body;  // must stay valid until Send returns
};

struct ClientResponse {
  int status = 0;
  HeaderList headers;  // names as received
  std::string body;

  // The first header with this name (case-insensitive).
  std::optional<std::string_view> Header(std::string_view name) const;
};

struct HttpClientOptions {
  std::string user_agent = "xetstore";
  long connect_timeout_ms = 10000;
  // A transfer slower than low_speed_bytes per second for low_speed_seconds is aborted
  // (and retried): a dead peer never hangs the client.
  long low_speed_bytes = 1024;
  long low_speed_seconds = 30;
  // Largest body buffered into a ClientResponse (Send, or a non-2xx answer of Stream).
  uint64_t max_response_bytes = 256ull << 20;
  // Send Accept-Encoding for every encoding libcurl decodes (gzip, zstd, ...): the server
  // compresses large JSON answers. Bodies are always delivered decoded.
  bool accept_encoding = true;
  RetryPolicy retry;
  // Called before each retry with its cause (for logs and TransferStats::retries); may be
  // called from any thread.
  std::function<void(const Status& cause)> on_retry;
};

class HttpClient {
 public:
  explicit HttpClient(HttpClientOptions options = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends the request and buffers the answer (retrying as described above).
  Result<ClientResponse> Send(const ClientRequest& request);

  // Sends the request and streams the body of a 2xx answer to `sink` as it arrives (a
  // non-2xx answer is buffered into the returned response instead; the returned response of
  // a 2xx answer has an empty body). `on_headers`, if set, sees the status and headers of a
  // 2xx answer before its first body byte (again for each retried attempt). A retry after
  // some body bytes were delivered calls `on_restart` first so the consumer can discard
  // them; without `on_restart` such a failure is not retried (Unavailable).
  struct StreamCallbacks {
    std::function<bool(std::string_view)> sink;  // return false to abort (Status: Cancelled)
    std::function<void(int, const HeaderList&)> on_headers;
    std::function<void()> on_restart;
  };
  Result<ClientResponse> Stream(const ClientRequest& request, const StreamCallbacks& callbacks);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Maps a non-2xx answer to a Status with the server's {"error": ...} message (or the start
// of a non-JSON body; at most 300 bytes, control characters replaced): 400 and other 4xx →
// InvalidArgument, 401 → Unauthenticated, 403 → PermissionDenied, 404 → NotFound, 409 →
// AlreadyExists, 413 → ResourceExhausted, 416 → OutOfRange, 408/429/502/503/504 →
// Unavailable, 501 → Unimplemented, 507 → InsufficientStorage (the server's disk is full),
// other 5xx → Internal, anything else non-2xx →
// Internal. A 2xx answer maps to OK. `what` prefixes the message ("create bucket ns/b"),
// which ends with "(HTTP <status>)".
Status StatusFromResponse(const ClientResponse& response, std::string_view what);

}  // namespace xet
