// INTERNAL to the server: one HTTP/1.1 connection's state machine, and the state the
// server shares with its connections. Includes Boost.Beast (slow to compile): only
// http_server.cc and http_connection.cc may include this header.
#pragma once

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/buffer_pool.h"
#include "common/mutex.h"
#include "http/body_budget.h"
#include "http/http_server.h"
#include "http/message.h"
#include "http/metrics.h"
#include "http/router.h"

namespace xet::server_internal {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

class HttpConnection;

// Request bodies of at least 1 MiB are read into pooled buffers; at most 2 are kept idle
// (up to ~130 MiB with 64 MiB xorbs), and freed once no body has been in flight for a while
// (HttpServer's housekeeping).
inline constexpr size_t kPooledBodyBytes = 1 << 20;
inline constexpr size_t kPooledBodies = 2;
// A Content-Length body's buffer starts this large (or as large as the bytes already
// received, or a pooled buffer) and doubles as it fills, up to the declared length: memory
// follows the bytes that arrive, not the length a client announces.
inline constexpr size_t kFirstBodyBytes = 64 * 1024;

// How a new connection was admitted.
enum class Admission {
  kAdmitted,     // counted against max_connections (maybe in place of a shed one)
  kServerFull,   // every connection is mid-request: answer 503 and close
  kAddressFull,  // its address is at max_connections_per_address: answer 503 and close
};

// Owned by the server; outlives every connection and every worker task.
struct ServerShared {
  ServerShared(ServerOptions opts, Router r, std::shared_ptr<Metrics> m);

  ServerOptions options;
  Router router;
  std::shared_ptr<Metrics> metrics;
  Gauge& open_connections;
  Counter& rejected_connections;
  Counter& shed_connections;
  Counter& budget_refusals;
  Gauge& body_pool_bytes;
  // Request-body bytes in flight (ServerLimits::max_body_bytes_in_flight).
  BodyBudget body_budget;
  // Buffers of request bodies >= kPooledBodyBytes, reused once their request is handled.
  // Declared before `workers`, whose tasks return buffers to it, so it outlives them.
  StringBufferPool body_buffers{kPooledBodies};
  net::thread_pool workers;

  std::atomic<bool> stopping{false};  // Stop() began: no new requests
  std::atomic<bool> aborted{false};   // the shutdown deadline passed: cut everything
  std::atomic<size_t> active{0};      // connections counted against max_connections

  // Every live connection (rejected ones included), for Stop(), oldest first (ids grow).
  Mutex mu;
  CondVar cv;  // notified when a connection goes away
  std::map<uint64_t, std::weak_ptr<HttpConnection>> connections GUARDED_BY(mu);
  // Admitted connections per client address.
  std::unordered_map<std::string, size_t> per_address GUARDED_BY(mu);
  uint64_t next_id GUARDED_BY(mu) = 0;

  // Decides whether a new connection from `address` (an IP, no port) is served, shedding
  // the oldest connection with no request in progress when the server is full. An admitted
  // connection holds a slot (`active` and per_address) until ReleaseSlot(address).
  Admission Admit(const std::string& address);
  void ReleaseSlot(const std::string& address);
  // Whether the server is at or above 3/4 of max_connections.
  bool Busy() const;

  uint64_t Register(const std::shared_ptr<HttpConnection>& connection);
  void Unregister(uint64_t id);

  // Records one answered request in the metrics and the access log.
  void RecordRequest(const AccessLogEntry& entry);
};

// A fully prepared response: the Beast message plus, for streamed answers, the producer.
struct Outgoing {
  http::response<http::string_body> message;
  std::function<void(const std::function<bool(std::string_view)>& write)> stream;
  std::shared_ptr<const std::vector<std::string>> shared_body;  // HttpResponse::shared_body
  std::shared_ptr<const RangeBody> range_body;                  // HttpResponse::range_body
  bool header_only = false;  // HEAD (or a stream): the serializer writes only the header
  bool raw_stream = false;   // no chunk framing: HTTP/1.0 (then close) or a declared length
  // A stream with a declared Content-Length: exactly this many bytes must be produced; a
  // producer that writes more is cut off, and one that writes fewer gets the connection
  // closed, so the client sees a truncated body instead of a short one.
  std::optional<uint64_t> stream_length;
  uint64_t streamed = 0;  // bytes of the stream written so far (on the connection's strand)
  std::string error;      // for the access log (e.g. a handler's exception)
};

class HttpConnection : public std::enable_shared_from_this<HttpConnection> {
 public:
  // `address`: the peer's IP (the per-address key). Unless `admission` is kAdmitted, the
  // connection answers 503 and closes; an admitted one gives its slot back
  // (ServerShared::ReleaseSlot) when destroyed, unless it was shed.
  HttpConnection(ServerShared& shared, tcp::socket socket, std::string address,
                 Admission admission);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  void Start();
  // Stop() began: close now if no request is in progress (thread-safe; posts).
  void BeginShutdown();
  // The shutdown deadline passed: close now (thread-safe; posts).
  void ForceClose();
  // Claims this connection for shedding if it has no request in progress (idle, or waiting
  // for or reading request headers), then closes it (posts). The caller takes over its
  // slot: the connection no longer releases it. Thread-safe; false if it is mid-request.
  bool TryShed();
  const std::string& address() const { return address_; }

 private:
  enum class State {
    kIdle,
    kReadingHeader,
    kChecking,  // the route's pre-body check runs on a worker
    kReadingBody,
    kHandling,
    kWriting,
    kClosing,
    kClosed
  };
  // Whether the connection may be shed: between requests, mid-request, or shed already.
  enum Mark : int { kBusy, kSheddable, kShed };
  // Why the socket's pending operation was cancelled.
  enum class Cancel { kNone, kIdle, kHeaderTimeout, kBodyPace, kWriteTimeout, kLinger, kShutdown };

  void WaitForRequest();
  void ReadHeader();
  void OnHeader(beast::error_code ec);
  // The request without its body, as handlers and pre-body checks see it.
  HttpRequest RequestHead() const;
  // Runs the route's pre-body check on a worker, then AdmitBody() or answers its refusal.
  void CheckBeforeBody(const PreBodyCheck& check);
  // Reserves the body against the server's budget (503 when it does not fit), sends
  // 100 Continue if asked for, and starts the body.
  void AdmitBody();
  void StartBody();
  // Resizes body_ to `size` bytes (<= the declared length), keeping the bytes received.
  void GrowBody(size_t size);
  // A chunked body goes through the parser; a Content-Length body is read straight into
  // body_ (no per-read copy, reads as large as the socket has data).
  void ReadBody();
  void OnBody(beast::error_code ec, size_t bytes);
  void ReadRawBody();
  void OnRawBody(beast::error_code ec, size_t bytes);
  void FailBody(beast::error_code ec);
  void Dispatch();
  // Answers on this strand, with no handler: used for errors and router misses.
  void Respond(HttpResponse response, bool keep_alive);
  void Write(Outgoing outgoing);
  void OnWritten(beast::error_code ec, size_t bytes);
  void RunStream();
  // Called from a worker thread by the stream producer; blocks until written.
  bool WriteStreamPiece(std::string_view piece);
  void FinishStream();
  // Writes shared_body's pieces from `index` on, one at a time (a write timeout per piece).
  void WriteSharedPieces(size_t index);
  // Writes range_body's pieces from `index` on: its text, then its range of the file or of
  // the memory.
  void WriteRangePieces(size_t index);
  // Writes piece `index`'s range of the memory from `sent` bytes on, kRangeSliceBytes per
  // write (each under its own write timeout).
  void SendMemoryRange(size_t index, uint64_t sent);
  // Sends piece `index`'s file range from `sent` bytes on with sendfile(2), at most
  // kRangeSliceBytes per call, going back to the reactor between calls (so one large body
  // neither hogs this I/O thread nor, on uncached data, blocks it for long).
  void SendFileRange(size_t index, uint64_t sent);
  // A range body could not be sent whole: record why and close, so the client sees a short
  // body.
  void FailRangeBody(std::string why);
  void CompleteRequest();
  void LingerClose();
  void Drain();
  void Close();

  void ArmTimer(std::chrono::steady_clock::duration after, Cancel reason);
  void ArmPaceTimer();
  void DisarmTimer();
  void OnTimer();

  ServerShared& shared_;
  tcp::socket socket_;
  net::steady_timer timer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<Outgoing> outgoing_;
  std::optional<http::response_serializer<http::string_body>> serializer_;
  std::unique_ptr<char[]> drain_buffer_;
  std::chrono::steady_clock::time_point opened_;

  uint64_t id_ = 0;
  const std::string address_;
  const Admission admission_;
  std::atomic<int> mark_{kBusy};
  std::chrono::milliseconds first_header_timeout_{0};
  State state_ = State::kIdle;
  Cancel cancel_ = Cancel::kNone;
  Cancel timer_reason_ = Cancel::kNone;
  uint64_t timer_generation_ = 0;
  bool first_request_ = true;
  bool keep_alive_ = false;
  size_t drained_ = 0;
  std::atomic<bool> stream_failed_{false};

  // The request in progress.
  std::string remote_;
  std::string method_;
  std::string target_;
  std::string route_name_;
  unsigned version_ = 11;
  bool head_ = false;
  const HttpHandler* handler_ = nullptr;
  RouteParams params_;
  std::chrono::system_clock::time_point request_time_;
  std::chrono::steady_clock::time_point request_start_;
  std::chrono::steady_clock::time_point body_start_;
  uint64_t body_wire_bytes_ = 0;  // body bytes read so far, chunk framing included
  bool raw_body_ = false;         // the body is read into body_, not by the parser
  std::string body_;              // a Content-Length body, when raw_body_
  size_t body_length_ = 0;        // its declared length (body_ grows up to it)
  size_t body_received_ = 0;      // bytes of body_ filled so far
  BodyReservation reservation_;   // the body's bytes against shared_.body_budget
  uint64_t bytes_in_ = 0;
  uint64_t bytes_out_ = 0;
  int status_ = 0;
};

}  // namespace xet::server_internal
