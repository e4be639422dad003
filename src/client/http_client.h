// HttpClient: the client side of HTTP for everything in client/ (libcurl underneath).
//
// Thread-safe: any number of threads call Send/Get concurrently; each thread reuses its own
// curl handle (keep-alive connections, TLS sessions). Retries follow a RetryPolicy on the
// retryable classes only, re-sending the same body; a request that still fails answers:
//   Unavailable   the server could not be reached (connect/timeout/reset) or kept answering
//                 a retryable status — the message names the URL and the last cause;
//   OK + status   any other HTTP answer, including 4xx (the caller maps it, see
//                 StatusFromResponse).
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

#include "client/retry_policy.h"
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
  RetryPolicy retry;
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
  // non-2xx answer is buffered into the returned response instead). `on_headers`, if set,
  // sees the status and headers first. A retry after some body bytes were delivered calls
  // `on_restart` (required then) so the consumer can discard them.
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

// Maps a non-2xx answer to a Status with the server's {"error": ...} message: 400 →
// InvalidArgument, 401 → Unauthenticated, 403 → PermissionDenied, 404 → NotFound, 409 →
// AlreadyExists, 413 → ResourceExhausted, 416 → OutOfRange, 5xx → Unavailable/Internal.
// `what` prefixes the message ("create bucket ns/b").
Status StatusFromResponse(const ClientResponse& response, std::string_view what);

}  // namespace xet
