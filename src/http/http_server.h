// HttpServer: HTTP/1.1 with keep-alive on Boost.Beast/Asio, serving a Router.
//
// Threading: a few I/O threads run the accept loop and every socket operation; route
// handlers run on a separate worker pool, so a handler that blocks on disk or a database
// never stalls I/O. Requests on one connection are answered in order; the next request
// (pipelined or not) is read only after the previous response has been written.
//
// The server owns two routes unless the Router already has them:
//   GET /healthz  -> 200 {"status":"ok"}
//   GET /metrics  -> the Metrics registry in Prometheus text format, including the
//                    server's own request counts, latency histograms (per route name and
//                    status class), body bytes in/out and open connections, plus
//                    xetstore_http_body_bytes_reserved (request-body bytes held against
//                    ServerLimits::max_body_bytes_in_flight), xetstore_http_body_pool_bytes
//                    (idle pooled body buffers), xetstore_http_body_budget_refusals_total
//                    and xetstore_http_shed_connections_total.
//
// Connection policy (docs/SERVER.md "Connection policy"): at max_connections a new
// connection closes the oldest connection that has no request in progress (idle between
// requests, or still waiting for or reading its request headers) and takes its place; only
// when every connection is in the middle of a request is the newcomer answered 503. One
// client address holds at most max_connections_per_address connections (503 beyond).
// Beast stays out of this header: include it freely.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"
#include "http/access_log.h"
#include "http/metrics.h"
#include "http/router.h"

namespace xet {

struct ServerLimits {
  // Request line plus header fields; larger -> 431 and close.
  uint32_t max_header_bytes = 16 * 1024;
  // Request body limit for routes without RouteOptions::max_body_bytes; larger -> 413
  // (from Content-Length before reading the body; while reading a chunked body).
  uint64_t max_body_bytes = 1 << 20;
  // Time allowed to receive a request's headers, counted from the connection's opening
  // (first request) or from the first byte of the request (later ones); exceeded -> 408.
  std::chrono::milliseconds header_timeout{10'000};
  // A keep-alive connection with no request in progress is closed after this.
  std::chrono::milliseconds idle_timeout{60'000};
  // Minimum average body upload rate, enforced once `body_grace` has passed since the
  // body started; slower -> 408 and close. 0 disables the check.
  uint64_t min_body_bytes_per_second = 4 * 1024;
  std::chrono::milliseconds body_grace{10'000};
  // One response write (a whole buffered response, or one streamed piece) that does not
  // complete within this closes the connection (a client that stopped reading).
  std::chrono::milliseconds write_timeout{60'000};
  // Once the server is at or above 3/4 of max_connections, a new connection gets this
  // (instead of header_timeout) to send its first request's headers.
  std::chrono::milliseconds busy_header_timeout{2'000};
  // Open connections at once. At the limit a new connection sheds the oldest one with no
  // request in progress; if every connection is mid-request, it is answered 503 and closed.
  size_t max_connections = 1024;
  // Open connections from one client IP address; beyond it new ones are answered 503 and
  // closed. 0 = no per-address limit.
  size_t max_connections_per_address = 512;
  // Request-body bytes held at once over all connections: a body reserves its declared
  // Content-Length (a chunked one, what it has grown to) before any byte is read, after the
  // route's pre-body check passed; a body that does not fit is answered 503 with
  // Retry-After and the connection closed. 0 = no limit.
  uint64_t max_body_bytes_in_flight = uint64_t{1} << 30;
  // After a response that closes the connection, how long unread client bytes are
  // drained before the socket closes (so the client sees the response, not a reset).
  std::chrono::milliseconds close_linger{2'000};
  // Stop(): how long in-flight requests get to finish before connections are cut.
  std::chrono::milliseconds shutdown_deadline{30'000};
  // Buffered JSON responses at least this large are compressed (gzip or zstd) when the
  // client's Accept-Encoding allows it.
  size_t compress_min_bytes = 1024;
};

struct ServerOptions {
  std::string address = "127.0.0.1";  // IPv4 or IPv6 literal
  uint16_t port = 8080;               // 0: an ephemeral port (see HttpServer::port())
  int io_threads = 2;                 // socket I/O and the accept loop
  int worker_threads = 16;            // route handlers (may block)
  ServerLimits limits;
  // One JSON line per request (see access_log.h); null: no access log.
  AccessLogSink access_log = StderrAccessLogSink();
  // Registry served on /metrics and fed with the server's own metrics; null: the server
  // creates one (see HttpServer::metrics()).
  std::shared_ptr<Metrics> metrics;
};

class HttpServer {
 public:
  // Binds, listens and starts serving `router`. Fails (IoError / InvalidArgument) when
  // the address cannot be parsed or bound.
  static Result<std::unique_ptr<HttpServer>> Start(Router router, ServerOptions options);

  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  // Stop()s if still running.
  ~HttpServer();

  // The bound port (useful with port 0).
  uint16_t port() const;
  Metrics& metrics();
  const std::shared_ptr<Metrics>& shared_metrics() const;

  // Graceful shutdown: stops accepting (new connections are refused), closes connections
  // that are idle or still reading request headers, lets requests whose headers were
  // read finish and their responses be written (responses then carry Connection: close),
  // and after ServerLimits::shutdown_deadline cuts whatever remains. Returns once every
  // thread has stopped. Idempotent and thread-safe; must not be called from a handler.
  void Stop();
  // Blocks until Stop() has completed (on whichever thread called it).
  void Wait();

 private:
  class Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace xet
