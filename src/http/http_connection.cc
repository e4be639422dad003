#include "http/http_connection.h"

#include <sys/sendfile.h>

#include <algorithm>
#include <boost/asio/buffer.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <exception>
#include <future>
#include <utility>

#include "common/ascii.h"
#include "common/huge_pages.h"
#include "http/response_compression.h"
#include "http/url.h"

namespace xet::server_internal {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
constexpr std::string_view kLastChunk = "0\r\n\r\n";
constexpr size_t kDrainBufferSize = 16 * 1024;
constexpr size_t kMaxDrainBytes = 4 << 20;
constexpr size_t kChunkedReadBytes = 64 * 1024;  // Beast reads at most 64 KiB at a time
// Bytes of a range body sent per sendfile(2) call or write: a cache miss then blocks the
// I/O thread for at most one read of this size, and the write timeout applies per slice
// (a 64 MiB range to a client reading at 1 MB/s is slow, not stuck).
constexpr size_t kRangeSliceBytes = 2 << 20;

bool IContains(std::string_view haystack, std::string_view needle) {
  if (needle.size() > haystack.size()) return false;
  for (size_t i = 0; i + needle.size() <= haystack.size(); ++i) {
    if (EqualsIgnoreAsciiCase(haystack.substr(i, needle.size()), needle)) return true;
  }
  return false;
}

bool IsHttpParseError(const beast::error_code& ec) {
  static const beast::error_code kSample = http::error::bad_method;
  return &ec.category() == &kSample.category();
}

// Header names/values a handler set are copied verbatim unless they could split the
// header block.
bool SafeField(std::string_view name, std::string_view value) {
  if (name.empty()) return false;
  for (char c : name) {
    if (c <= ' ' || c == ':' || c == 127) return false;
  }
  return value.find_first_of("\r\n") == std::string_view::npos;
}

bool StatusHasNoBody(int status) {
  return (status >= 100 && status < 200) || status == 204 || status == 304;
}

std::string StatusClass(int status) {
  if (status < 100 || status > 599) return "other";
  return std::to_string(status / 100) + "xx";
}

HttpResponse RunHandler(const HttpHandler& handler, const HttpRequest& request,
                        const RouteParams& params, std::string* error) {
  try {
    return handler(request, params);
  } catch (const std::exception& e) {
    *error = std::string("handler threw: ") + e.what();
  } catch (...) {
    *error = "handler threw a non-exception";
  }
  return HttpResponse::Error(500, "internal server error");
}

// The answer to a body that does not fit ServerLimits::max_body_bytes_in_flight.
HttpResponse OverBudgetResponse() {
  HttpResponse busy = HttpResponse::Error(503, "too many request bodies in flight; retry later");
  busy.headers.Set("Retry-After", "1");
  return busy;
}

struct ResponseContext {
  unsigned version = 11;
  bool head = false;
  bool keep_alive = true;
  std::string accept_encoding;
  size_t compress_min_bytes = 1024;
};

// Turns a handler's answer into the message the connection writes (compressing
// eligible JSON bodies); runs on the worker thread that ran the handler.
Outgoing BuildOutgoing(HttpResponse response, const ResponseContext& context) {
  Outgoing out;
  auto& message = out.message;
  message.version(context.version);
  int status = response.status;
  if (status < 100 || status > 999) {
    out.error = "handler returned invalid status " + std::to_string(status);
    response = HttpResponse::Error(500, "internal server error");
    status = 500;
  }
  message.result(static_cast<unsigned>(status));
  for (const char* name : {"Content-Length", "Transfer-Encoding", "Connection"}) {
    response.headers.Remove(name);
  }
  for (const auto& [name, value] : response.headers.fields()) {
    if (SafeField(name, value)) message.insert(name, value);
  }

  const bool no_body = StatusHasNoBody(status);
  if (response.stream) {
    response.shared_body.reset();
    response.range_body.reset();
  } else if (response.shared_body) {
    response.range_body.reset();
    response.content_length = 0;
    for (const std::string& piece : *response.shared_body) *response.content_length += piece.size();
  } else if (response.range_body) {
    response.content_length = response.range_body->size();
  }
  if ((response.shared_body || response.range_body) && !context.head && !no_body) {
    message.set(http::field::content_length, std::to_string(*response.content_length));
    out.shared_body = std::move(response.shared_body);
    out.range_body = std::move(response.range_body);
    out.header_only = true;
    message.keep_alive(context.keep_alive);
    return out;
  }
  if (response.stream && !context.head && !no_body) {
    out.stream = std::move(response.stream);
    out.header_only = true;
    if (response.content_length) {  // known length: unframed, and the connection stays usable
      message.set(http::field::content_length, std::to_string(*response.content_length));
      out.raw_stream = true;
      out.stream_length = *response.content_length;
      message.keep_alive(context.keep_alive);
      return out;
    }
    if (context.version >= 11) {
      message.set(http::field::transfer_encoding, "chunked");
    } else {
      out.raw_stream = true;  // HTTP/1.0: the body ends when the connection closes
    }
    message.keep_alive(context.keep_alive && !out.raw_stream);
    return out;
  }
  if (context.head || no_body) {
    out.header_only = true;
    if (!no_body) {
      uint64_t length = response.content_length.value_or(response.body.size());
      message.set(http::field::content_length, std::to_string(length));
    }
    message.keep_alive(context.keep_alive);
    return out;
  }

  std::string_view content_type = response.headers.Get("Content-Type").value_or("");
  if (response.body.size() >= context.compress_min_bytes && IContains(content_type, "json") &&
      !response.headers.Get("Content-Encoding")) {
    std::string vary(response.headers.Get("Vary").value_or(""));
    message.set(http::field::vary, vary.empty() ? "Accept-Encoding" : vary + ", Accept-Encoding");
    ContentEncoding encoding = ChooseContentEncoding(context.accept_encoding);
    Result<std::string> compressed = Status::Internal("not compressed");
    if (encoding == ContentEncoding::kGzip) compressed = GzipCompress(response.body);
    if (encoding == ContentEncoding::kZstd) compressed = ZstdCompress(response.body);
    if (compressed.ok()) {
      response.body = std::move(compressed).value();
      message.set(http::field::content_encoding, ContentEncodingName(encoding));
    }
  }
  message.body() = std::move(response.body);
  message.content_length(message.body().size());
  message.keep_alive(context.keep_alive);
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// ServerShared

ServerShared::ServerShared(ServerOptions opts, Router r, std::shared_ptr<Metrics> m)
    : options(std::move(opts)),
      router(std::move(r)),
      metrics(std::move(m)),
      open_connections(
          metrics->GetGauge("xetstore_http_open_connections", "HTTP connections currently open.")),
      rejected_connections(metrics->GetCounter(
          "xetstore_http_rejected_connections_total",
          "Connections answered 503: max_connections reached with every connection "
          "mid-request, or max_connections_per_address reached.")),
      shed_connections(metrics->GetCounter(
          "xetstore_http_shed_connections_total",
          "Connections with no request in progress closed to admit a new one at "
          "max_connections.")),
      budget_refusals(metrics->GetCounter(
          "xetstore_http_body_budget_refusals_total",
          "Requests answered 503 because their body did not fit max_body_bytes_in_flight.")),
      body_pool_bytes(metrics->GetGauge("xetstore_http_body_pool_bytes",
                                        "Capacity of the idle pooled request-body buffers.")),
      body_budget(options.limits.max_body_bytes_in_flight,
                  &metrics->GetGauge("xetstore_http_body_bytes_reserved",
                                     "Request-body bytes reserved by requests in flight.")),
      workers(static_cast<size_t>(std::max(1, options.worker_threads))) {}

Admission ServerShared::Admit(const std::string& address) {
  // Connections looked at are released only after the lock: a reference taken here may be
  // the last one, and the destructor takes the lock (ReleaseSlot, Unregister).
  std::vector<std::shared_ptr<HttpConnection>> looked_at;
  std::shared_ptr<HttpConnection> shed;
  MutexLock lock(mu);
  const ServerLimits& limits = options.limits;
  size_t& from_address = per_address[address];
  if (limits.max_connections_per_address != 0 &&
      from_address >= limits.max_connections_per_address) {
    if (from_address == 0) per_address.erase(address);
    return Admission::kAddressFull;
  }
  if (active.load() >= limits.max_connections) {
    for (auto& [id, weak] : connections) {  // oldest first
      std::shared_ptr<HttpConnection> candidate = weak.lock();
      if (!candidate) continue;
      if (candidate->TryShed()) {
        shed = std::move(candidate);
        break;
      }
      looked_at.push_back(std::move(candidate));
    }
    if (!shed) {
      if (from_address == 0) per_address.erase(address);
      return Admission::kServerFull;
    }
    // The newcomer takes the shed connection's slot.
    shed_connections.Increment();
    active.fetch_sub(1);
    auto it = per_address.find(shed->address());
    if (it != per_address.end() && --it->second == 0) per_address.erase(it);
  }
  ++per_address[address];
  active.fetch_add(1);
  return Admission::kAdmitted;
}

void ServerShared::ReleaseSlot(const std::string& address) {
  MutexLock lock(mu);
  active.fetch_sub(1);
  auto it = per_address.find(address);
  if (it != per_address.end() && --it->second == 0) per_address.erase(it);
}

bool ServerShared::Busy() const { return active.load() * 4 >= options.limits.max_connections * 3; }

uint64_t ServerShared::Register(const std::shared_ptr<HttpConnection>& connection) {
  MutexLock lock(mu);
  uint64_t id = ++next_id;
  connections.emplace(id, connection);
  open_connections.Add(1);
  return id;
}

void ServerShared::Unregister(uint64_t id) {
  {
    MutexLock lock(mu);
    connections.erase(id);
    open_connections.Add(-1);
  }
  cv.NotifyAll();
}

void ServerShared::RecordRequest(const AccessLogEntry& entry) {
  std::string route(entry.route.empty() ? "unmatched" : entry.route);
  std::string code = StatusClass(entry.status);
  metrics
      ->GetCounter("xetstore_http_requests_total", "HTTP requests answered.",
                   {{"route", route}, {"code", code}})
      .Increment();
  metrics
      ->GetHistogram("xetstore_http_request_duration_seconds",
                     "Time from request headers read to response written.",
                     {{"route", route}, {"code", code}})
      .Observe(std::chrono::duration<double>(entry.duration).count());
  metrics
      ->GetCounter("xetstore_http_request_body_bytes_total", "Request body bytes received.",
                   {{"route", route}})
      .Increment(entry.bytes_in);
  metrics
      ->GetCounter("xetstore_http_response_bytes_total",
                   "Response bytes written, headers included.", {{"route", route}})
      .Increment(entry.bytes_out);
  if (options.access_log) options.access_log(FormatAccessLogLine(entry));
}

// ---------------------------------------------------------------------------------------
// HttpConnection

HttpConnection::HttpConnection(ServerShared& shared, tcp::socket socket, std::string address,
                               Admission admission)
    : shared_(shared),
      socket_(std::move(socket)),
      timer_(socket_.get_executor()),
      opened_(Clock::now()),
      address_(std::move(address)),
      admission_(admission) {
  beast::error_code ec;
  tcp::endpoint remote = socket_.remote_endpoint(ec);
  if (!ec) {
    remote_ = remote.address().is_v6() ? "[" + remote.address().to_string() + "]"
                                       : remote.address().to_string();
    remote_ += ":" + std::to_string(remote.port());
  }
  socket_.set_option(tcp::no_delay(true), ec);
}

HttpConnection::~HttpConnection() {
  // A shed connection's slot went to the connection that shed it.
  if (admission_ == Admission::kAdmitted && mark_.load() != kShed) shared_.ReleaseSlot(address_);
  if (id_ != 0) shared_.Unregister(id_);
}

void HttpConnection::Start() {
  id_ = shared_.Register(shared_from_this());
  const ServerLimits& limits = shared_.options.limits;
  first_header_timeout_ = shared_.Busy()
                              ? std::min(limits.header_timeout, limits.busy_header_timeout)
                              : limits.header_timeout;
  net::post(socket_.get_executor(), [self = shared_from_this()] {
    if (self->admission_ == Admission::kAdmitted) return self->WaitForRequest();
    self->shared_.rejected_connections.Increment();
    self->request_time_ = std::chrono::system_clock::now();
    self->request_start_ = Clock::now();
    self->Respond(HttpResponse::Error(503, self->admission_ == Admission::kAddressFull
                                               ? "too many connections from this address"
                                               : "too many connections"),
                  false);
  });
}

bool HttpConnection::TryShed() {
  int expected = kSheddable;
  if (!mark_.compare_exchange_strong(expected, kShed)) return false;
  net::post(socket_.get_executor(), [self = shared_from_this()] {
    self->cancel_ = Cancel::kShutdown;
    self->Close();
  });
  return true;
}

void HttpConnection::BeginShutdown() {
  net::post(socket_.get_executor(), [self = shared_from_this()] {
    if (self->state_ == State::kIdle || self->state_ == State::kReadingHeader) {
      self->cancel_ = Cancel::kShutdown;
      beast::error_code ignored;
      self->socket_.cancel(ignored);
    }
  });
}

void HttpConnection::ForceClose() {
  net::post(socket_.get_executor(), [self = shared_from_this()] { self->Close(); });
}

// --- timers ----------------------------------------------------------------------------

void HttpConnection::ArmTimer(Clock::duration after, Cancel reason) {
  ++timer_generation_;
  timer_reason_ = reason;
  timer_.expires_after(after);
  timer_.async_wait(
      [self = shared_from_this(), generation = timer_generation_](beast::error_code ec) {
        if (ec || generation != self->timer_generation_) return;
        self->OnTimer();
      });
}

void HttpConnection::ArmPaceTimer() {
  const ServerLimits& limits = shared_.options.limits;
  if (limits.min_body_bytes_per_second == 0) return;
  // The body is on pace while received >= pace * elapsed (after the grace period), so the
  // earliest moment it can fall behind is received / pace after the body started.
  auto earned = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(static_cast<double>(body_wire_bytes_) /
                                    static_cast<double>(limits.min_body_bytes_per_second)));
  Clock::time_point deadline = body_start_ + std::max<Clock::duration>(limits.body_grace, earned);
  ++timer_generation_;
  timer_reason_ = Cancel::kBodyPace;
  timer_.expires_at(deadline);
  timer_.async_wait(
      [self = shared_from_this(), generation = timer_generation_](beast::error_code ec) {
        if (ec || generation != self->timer_generation_) return;
        self->OnTimer();
      });
}

void HttpConnection::DisarmTimer() {
  ++timer_generation_;
  timer_.cancel();
}

void HttpConnection::OnTimer() {
  if (timer_reason_ == Cancel::kBodyPace) {
    if (state_ != State::kReadingBody) return;
    const ServerLimits& limits = shared_.options.limits;
    double elapsed = std::chrono::duration<double>(Clock::now() - body_start_).count();
    double needed = elapsed * static_cast<double>(limits.min_body_bytes_per_second);
    if (static_cast<double>(body_wire_bytes_) >= needed) {
      ArmPaceTimer();  // still on pace: check again when it could fall behind
      return;
    }
  }
  cancel_ = timer_reason_;
  beast::error_code ignored;
  socket_.cancel(ignored);
}

// --- reading ---------------------------------------------------------------------------

void HttpConnection::WaitForRequest() {
  if (shared_.stopping.load()) return LingerClose();
  parser_.emplace();
  parser_->header_limit(shared_.options.limits.max_header_bytes);
  parser_->body_limit(boost::none);  // checked per route once the header is read
  outgoing_.reset();
  serializer_.reset();
  method_.clear();
  target_.clear();
  route_name_.clear();
  version_ = 11;
  head_ = false;
  handler_ = nullptr;
  params_.clear();
  body_wire_bytes_ = bytes_in_ = bytes_out_ = 0;
  raw_body_ = false;
  body_ = std::string();
  body_length_ = 0;
  body_received_ = 0;
  reservation_.Reset();
  status_ = 0;
  cancel_ = Cancel::kNone;
  stream_failed_ = false;
  // Between requests: another connection may shed this one from here until its next
  // request's headers are read.
  int expected = kBusy;
  if (!mark_.compare_exchange_strong(expected, kSheddable) && expected == kShed) return Close();

  if (buffer_.size() > 0) return ReadHeader();  // a pipelined request is already here
  state_ = State::kIdle;
  const ServerLimits& limits = shared_.options.limits;
  ArmTimer(first_request_ ? first_header_timeout_ : limits.idle_timeout, Cancel::kIdle);
  socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](beast::error_code ec) {
    if (ec || self->state_ != State::kIdle) return self->Close();
    self->ReadHeader();
  });
}

void HttpConnection::ReadHeader() {
  state_ = State::kReadingHeader;
  cancel_ = Cancel::kNone;  // a timer that fired after the wait completed is moot
  request_time_ = std::chrono::system_clock::now();
  request_start_ = Clock::now();
  // The first request's headers are due header_timeout after the connection opened;
  // later ones header_timeout after their first byte.
  Clock::duration allowed = shared_.options.limits.header_timeout;
  if (first_request_) {
    allowed = first_header_timeout_;
    allowed -= std::min(allowed, Clock::now() - opened_);
  }
  ArmTimer(allowed, Cancel::kHeaderTimeout);
  http::async_read_header(
      socket_, buffer_, *parser_,
      [self = shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
}

void HttpConnection::OnHeader(beast::error_code ec) {
  DisarmTimer();
  if (state_ != State::kReadingHeader) return;
  first_request_ = false;
  int expected = kSheddable;
  if (!mark_.compare_exchange_strong(expected, kBusy) && expected == kShed) return Close();
  if (ec) {
    if (cancel_ == Cancel::kHeaderTimeout) {
      return Respond(HttpResponse::Error(408, "timed out reading the request headers"), false);
    }
    if (cancel_ != Cancel::kNone) return Close();
    if (ec == http::error::header_limit) {
      return Respond(HttpResponse::Error(431, "request headers too large"), false);
    }
    if (ec == http::error::end_of_stream || ec == http::error::partial_message) return Close();
    if (IsHttpParseError(ec)) {
      return Respond(HttpResponse::Error(400, "malformed request: " + ec.message()), false);
    }
    return Close();
  }

  auto& request = parser_->get();
  request_time_ = std::chrono::system_clock::now();
  request_start_ = Clock::now();
  method_ = std::string(request.method_string());
  target_ = std::string(request.target());
  version_ = request.version();
  head_ = method_ == "HEAD";
  const bool has_body = parser_->chunked() || parser_->content_length().value_or(0) > 0;
  // A request whose body stays unread cannot be followed by another on this connection.
  const bool reusable = !has_body && request.keep_alive() && !shared_.stopping.load();

  if (version_ != 10 && version_ != 11) {
    version_ = 11;
    return Respond(HttpResponse::Error(505, "HTTP version not supported"), false);
  }
  if (target_.empty() || target_[0] != '/') {
    return Respond(HttpResponse::Error(400, "request target must be an absolute path"), false);
  }
  TargetParts parts = SplitTarget(target_);
  if (!PercentDecode(parts.path)) {
    return Respond(HttpResponse::Error(400, "malformed percent-encoding in path"), false);
  }
  RouteMatch match = shared_.router.Find(method_, parts.path);
  if (!match.found()) {
    HttpResponse response = match.kind == RouteMatch::Kind::kMethodNotAllowed
                                ? HttpResponse::Error(405, "method not allowed")
                                : HttpResponse::Error(404, "not found");
    if (!match.allow.empty()) response.headers.Add("Allow", match.allow);
    return Respond(std::move(response), reusable);
  }
  handler_ = match.handler;
  params_ = std::move(match.params);
  const PreBodyCheck& pre_body = match.options->pre_body;
  route_name_ = match.options->name;
  const uint64_t max_body =
      match.options->max_body_bytes.value_or(shared_.options.limits.max_body_bytes);
  if (parser_->content_length() && *parser_->content_length() > max_body) {
    return Respond(
        HttpResponse::Error(413, "request body larger than " + std::to_string(max_body) + " bytes"),
        false);
  }
  parser_->body_limit(max_body);
  if (parser_->is_done()) return Dispatch();
  if (pre_body) return CheckBeforeBody(pre_body);
  AdmitBody();
}

HttpRequest HttpConnection::RequestHead() const {
  HttpRequest request;
  request.method = method_;
  TargetParts parts = SplitTarget(target_);
  request.path = PercentDecode(parts.path).value_or(std::string(parts.path));
  request.query = std::string(parts.query);
  for (const auto& field : parser_->get()) {
    request.headers.Add(std::string(field.name_string()), std::string(field.value()));
  }
  request.remote_address = remote_;
  return request;
}

void HttpConnection::CheckBeforeBody(const PreBodyCheck& check) {
  state_ = State::kChecking;
  net::post(
      shared_.workers, [self = shared_from_this(), &check, head = RequestHead(), params = params_] {
        std::optional<HttpResponse> refusal;
        std::string error;
        try {
          refusal = check(head, params);
        } catch (const std::exception& e) {
          error = std::string("pre-body check threw: ") + e.what();
        } catch (...) {
          error = "pre-body check threw a non-exception";
        }
        if (!error.empty()) refusal = HttpResponse::Error(500, "internal server error");
        net::post(self->socket_.get_executor(), [self, refusal = std::move(refusal)]() mutable {
          if (self->state_ != State::kChecking) return;  // closed meanwhile
          if (refusal) return self->Respond(std::move(*refusal), false);
          self->AdmitBody();
        });
      });
}

void HttpConnection::AdmitBody() {
  // A chunked body reserves as it grows (OnBody); a declared one its whole length now.
  const bool declared = !parser_->chunked() && parser_->content_length().has_value();
  std::optional<BodyReservation> reservation =
      shared_.body_budget.Reserve(declared ? *parser_->content_length() : 0);
  if (!reservation) {
    shared_.budget_refusals.Increment();
    return Respond(OverBudgetResponse(), false);
  }
  reservation_ = std::move(*reservation);

  auto& request = parser_->get();
  auto expect = request.find(http::field::expect);
  if (expect != request.end() && EqualsIgnoreAsciiCase(expect->value(), "100-continue") &&
      version_ >= 11) {
    state_ = State::kReadingBody;
    ArmTimer(shared_.options.limits.write_timeout, Cancel::kWriteTimeout);
    return net::async_write(socket_, net::buffer(kContinue.data(), kContinue.size()),
                            [self = shared_from_this()](beast::error_code write_ec, size_t) {
                              self->DisarmTimer();
                              if (write_ec) return self->Close();
                              self->StartBody();
                            });
  }
  StartBody();
}

void HttpConnection::StartBody() {
  state_ = State::kReadingBody;
  cancel_ = Cancel::kNone;
  body_start_ = Clock::now();
  body_wire_bytes_ = 0;
  ArmPaceTimer();
  if (parser_->chunked() || !parser_->content_length()) {
    // The parser reads at most what the buffer can hold: give it room for large reads.
    buffer_.reserve(kChunkedReadBytes);
    return ReadBody();
  }
  // The length was checked against the route's limit before the body was started.
  raw_body_ = true;
  body_length_ = static_cast<size_t>(*parser_->content_length());
  // Large bodies (xorbs are up to 64 MiB) reuse the buffers of earlier requests when one
  // is pooled (its memory is already there); otherwise the buffer grows as bytes arrive.
  body_ = body_length_ >= kPooledBodyBytes ? shared_.body_buffers.TakePooled() : std::string();
  GrowBody(std::min(body_length_, std::max({kFirstBodyBytes, buffer_.size(), body_.capacity()})));
  body_received_ = net::buffer_copy(net::buffer(body_.data(), body_.size()), buffer_.data());
  buffer_.consume(body_received_);  // what the header read brought beyond the header
  body_wire_bytes_ = body_received_;
  ReadRawBody();
}

void HttpConnection::GrowBody(size_t size) {
  if (size > body_.capacity()) {
    std::string bigger;
    bigger.reserve(size);
    AdviseHugePages(bigger.data(), bigger.capacity());
    bigger.append(body_.data(), body_received_);
    // The smaller buffer is freed, not pooled: the pool keeps whole bodies' buffers, which
    // fit the next large body without growing.
    body_ = std::move(bigger);
  }
  body_.resize(size);
}

void HttpConnection::ReadBody() {
  http::async_read_some(
      socket_, buffer_, *parser_,
      [self = shared_from_this()](beast::error_code ec, size_t bytes) { self->OnBody(ec, bytes); });
}

void HttpConnection::OnBody(beast::error_code ec, size_t bytes) {
  if (state_ != State::kReadingBody) return;
  body_wire_bytes_ += bytes;
  if (ec) return FailBody(ec);
  if (!reservation_.GrowTo(parser_->get().body().capacity())) {
    DisarmTimer();
    shared_.budget_refusals.Increment();
    return Respond(OverBudgetResponse(), false);
  }
  if (!parser_->is_done()) return ReadBody();
  DisarmTimer();
  Dispatch();
}

void HttpConnection::ReadRawBody() {
  if (body_received_ == body_length_) {
    DisarmTimer();
    return Dispatch();
  }
  if (body_received_ == body_.size()) {
    GrowBody(std::min(body_length_, body_.size() * 2));
  }
  socket_.async_read_some(net::buffer(body_.data() + body_received_, body_.size() - body_received_),
                          [self = shared_from_this()](beast::error_code ec, size_t bytes) {
                            self->OnRawBody(ec, bytes);
                          });
}

void HttpConnection::OnRawBody(beast::error_code ec, size_t bytes) {
  if (state_ != State::kReadingBody) return;
  body_received_ += bytes;
  body_wire_bytes_ += bytes;
  if (ec == net::error::eof) ec = http::error::partial_message;
  if (ec) return FailBody(ec);
  ReadRawBody();
}

void HttpConnection::FailBody(beast::error_code ec) {
  DisarmTimer();
  if (cancel_ == Cancel::kBodyPace) {
    return Respond(HttpResponse::Error(408, "request body arrived too slowly"), false);
  }
  if (cancel_ != Cancel::kNone) return Close();
  if (ec == http::error::body_limit) {
    return Respond(HttpResponse::Error(413, "request body too large"), false);
  }
  if (ec == http::error::end_of_stream || ec == http::error::partial_message) return Close();
  if (IsHttpParseError(ec)) {
    return Respond(HttpResponse::Error(400, "malformed request body: " + ec.message()), false);
  }
  return Close();
}

// --- handling --------------------------------------------------------------------------

void HttpConnection::Dispatch() {
  state_ = State::kHandling;
  auto& message = parser_->get();
  keep_alive_ = message.keep_alive() && !shared_.stopping.load();

  HttpRequest request = RequestHead();
  request.body = raw_body_ ? std::move(body_) : std::move(message.body());
  bytes_in_ = request.body.size();

  ResponseContext context;
  context.version = version_;
  context.head = head_;
  context.keep_alive = keep_alive_;
  context.accept_encoding = std::string(request.headers.Get("Accept-Encoding").value_or(""));
  context.compress_min_bytes = shared_.options.limits.compress_min_bytes;

  net::post(
      shared_.workers, [self = shared_from_this(), handler = handler_, request = std::move(request),
                        params = std::move(params_), context = std::move(context),
                        reservation = std::move(reservation_)]() mutable {
        std::string error;
        HttpResponse response = RunHandler(*handler, request, params, &error);
        if (request.body.capacity() >= kPooledBodyBytes) {
          self->shared_.body_buffers.Give(std::move(request.body));
        }
        request.body = std::string();
        reservation.Reset();  // the body is gone
        Outgoing outgoing = BuildOutgoing(std::move(response), context);
        if (outgoing.error.empty()) outgoing.error = std::move(error);
        net::post(self->socket_.get_executor(), [self, outgoing = std::move(outgoing)]() mutable {
          self->Write(std::move(outgoing));
        });
      });
}

void HttpConnection::Respond(HttpResponse response, bool keep_alive) {
  keep_alive_ = keep_alive && !shared_.stopping.load();
  ResponseContext context;
  context.version = version_;
  context.head = head_;
  context.keep_alive = keep_alive_;
  context.compress_min_bytes = SIZE_MAX;
  Write(BuildOutgoing(std::move(response), context));
}

// --- writing ---------------------------------------------------------------------------

void HttpConnection::Write(Outgoing outgoing) {
  if (state_ == State::kClosed) return;
  state_ = State::kWriting;
  if (shared_.stopping.load() && keep_alive_) {
    keep_alive_ = false;
    outgoing.message.keep_alive(false);
  }
  outgoing_ = std::move(outgoing);
  status_ = static_cast<int>(outgoing_->message.result_int());
  ArmTimer(shared_.options.limits.write_timeout, Cancel::kWriteTimeout);
  if (outgoing_->header_only) {
    serializer_.emplace(outgoing_->message);
    http::async_write_header(socket_, *serializer_,
                             [self = shared_from_this()](beast::error_code ec, size_t bytes) {
                               self->DisarmTimer();
                               self->bytes_out_ += bytes;
                               if (ec) return self->OnWritten(ec, 0);
                               if (self->outgoing_->shared_body) {
                                 return self->WriteSharedPieces(0);
                               }
                               if (self->outgoing_->range_body) return self->WriteRangePieces(0);
                               if (!self->outgoing_->stream) return self->OnWritten(ec, 0);
                               self->RunStream();
                             });
    return;
  }
  http::async_write(socket_, outgoing_->message,
                    [self = shared_from_this()](beast::error_code ec, size_t bytes) {
                      self->DisarmTimer();
                      self->OnWritten(ec, bytes);
                    });
}

void HttpConnection::OnWritten(beast::error_code ec, size_t bytes) {
  bytes_out_ += bytes;
  CompleteRequest();
  if (ec) return Close();
  if (!keep_alive_) return LingerClose();
  WaitForRequest();
}

void HttpConnection::RunStream() {
  auto producer = std::move(outgoing_->stream);
  net::post(shared_.workers, [self = shared_from_this(), producer = std::move(producer)] {
    auto write = [&self](std::string_view piece) { return self->WriteStreamPiece(piece); };
    try {
      producer(write);
    } catch (const std::exception& e) {
      self->stream_failed_ = true;
      net::post(self->socket_.get_executor(), [self, what = std::string(e.what())] {
        self->outgoing_->error = "stream producer threw: " + what;
      });
    } catch (...) {
      self->stream_failed_ = true;
    }
    net::post(self->socket_.get_executor(), [self] { self->FinishStream(); });
  });
}

bool HttpConnection::WriteStreamPiece(std::string_view piece) {
  if (stream_failed_.load()) return false;
  if (piece.empty()) return true;
  auto done = std::make_shared<std::promise<bool>>();
  std::future<bool> written = done->get_future();
  // The write owns a copy: on a forced shutdown the producer may return (and free its
  // buffer) before the write has finished.
  auto copy = std::make_shared<std::string>(piece);
  net::post(socket_.get_executor(), [self = shared_from_this(), copy, done] {
    std::string_view data = *copy;
    if (self->state_ == State::kClosed) return done->set_value(false);
    Outgoing& out = *self->outgoing_;
    if (out.stream_length && data.size() > *out.stream_length - out.streamed) {
      // More than the declared Content-Length: the rest of the response would be garbage.
      self->stream_failed_ = true;
      out.error = "stream producer wrote more than its Content-Length";
      return done->set_value(false);
    }
    out.streamed += data.size();
    auto on_written = [self, done, copy](beast::error_code ec, size_t bytes) {
      self->DisarmTimer();
      self->bytes_out_ += bytes;
      if (ec) {
        self->stream_failed_ = true;
        // The client is gone; make sure nothing else is pending on the socket.
        beast::error_code ignored;
        self->socket_.shutdown(tcp::socket::shutdown_both, ignored);
      }
      done->set_value(!ec);
    };
    self->ArmTimer(self->shared_.options.limits.write_timeout, Cancel::kWriteTimeout);
    if (self->outgoing_->raw_stream) {
      net::async_write(self->socket_, net::buffer(data.data(), data.size()), on_written);
    } else {
      net::async_write(self->socket_, http::make_chunk(net::buffer(data.data(), data.size())),
                       on_written);
    }
  });
  // Poll so a forced shutdown (which stops the I/O threads) cannot strand the producer.
  while (written.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
    if (shared_.aborted.load()) {
      stream_failed_ = true;
      return false;
    }
  }
  return written.get();
}

void HttpConnection::WriteSharedPieces(size_t index) {
  const auto& pieces = *outgoing_->shared_body;
  while (index < pieces.size() && pieces[index].empty()) ++index;
  if (index == pieces.size()) return OnWritten({}, 0);
  ArmTimer(shared_.options.limits.write_timeout, Cancel::kWriteTimeout);
  net::async_write(socket_, net::buffer(pieces[index]),
                   [self = shared_from_this(), index](beast::error_code ec, size_t bytes) {
                     self->DisarmTimer();
                     self->bytes_out_ += bytes;
                     if (ec) return self->OnWritten(ec, 0);
                     self->WriteSharedPieces(index + 1);
                   });
}

void HttpConnection::WriteRangePieces(size_t index) {
  const RangeBody& body = *outgoing_->range_body;
  if (index == body.pieces.size()) return OnWritten({}, 0);
  const std::string& text = body.pieces[index].text;
  auto send_range = [this, index] {
    if (outgoing_->range_body->memory) return SendMemoryRange(index, 0);
    SendFileRange(index, 0);
  };
  if (text.empty()) return send_range();
  ArmTimer(shared_.options.limits.write_timeout, Cancel::kWriteTimeout);
  net::async_write(socket_, net::buffer(text),
                   [self = shared_from_this(), send_range](beast::error_code ec, size_t bytes) {
                     self->DisarmTimer();
                     self->bytes_out_ += bytes;
                     if (ec) return self->OnWritten(ec, 0);
                     send_range();
                   });
}

void HttpConnection::SendMemoryRange(size_t index, uint64_t sent) {
  const RangeBody& body = *outgoing_->range_body;
  const RangeBody::Piece& piece = body.pieces[index];
  if (sent == piece.length) return WriteRangePieces(index + 1);
  const std::string& memory = *body.memory;
  // The memory never changes: checking the whole range before its first slice is enough.
  if (sent == 0 && (piece.offset > memory.size() || piece.length > memory.size() - piece.offset)) {
    return FailRangeBody("range body: the range lies outside its memory");
  }
  const size_t want =
      static_cast<size_t>(std::min<uint64_t>(piece.length - sent, kRangeSliceBytes));
  ArmTimer(shared_.options.limits.write_timeout, Cancel::kWriteTimeout);
  net::async_write(socket_, net::buffer(memory.data() + piece.offset + sent, want),
                   [self = shared_from_this(), index, sent](beast::error_code ec, size_t bytes) {
                     self->DisarmTimer();
                     self->bytes_out_ += bytes;
                     if (ec) return self->OnWritten(ec, 0);
                     self->SendMemoryRange(index, sent + bytes);
                   });
}

void HttpConnection::SendFileRange(size_t index, uint64_t sent) {
  const RangeBody& body = *outgoing_->range_body;
  const RangeBody::Piece& piece = body.pieces[index];
  if (sent == piece.length) return WriteRangePieces(index + 1);
  if (!socket_.native_non_blocking()) {  // set once per connection, not once per call
    beast::error_code ec;
    socket_.native_non_blocking(true, ec);
    if (ec) return FailRangeBody("sendfile: " + ec.message());
  }
  off_t offset = static_cast<off_t>(piece.offset + sent);
  const size_t want =
      static_cast<size_t>(std::min<uint64_t>(piece.length - sent, kRangeSliceBytes));
  const ssize_t n = ::sendfile(socket_.native_handle(), body.file.get(), &offset, want);
  if (n == 0) return FailRangeBody("file body: the file ended before its range did");
  if (n < 0 && errno != EAGAIN && errno != EINTR) {
    if (errno == EPIPE || errno == ECONNRESET) return FailRangeBody("");  // the client left
    return FailRangeBody(std::string("sendfile: ") + std::strerror(errno));
  }
  if (n > 0) {
    sent += static_cast<uint64_t>(n);
    bytes_out_ += static_cast<uint64_t>(n);
  }
  // Back through the reactor: at once if the socket can take more, else once it can.
  ArmTimer(shared_.options.limits.write_timeout, Cancel::kWriteTimeout);
  socket_.async_wait(tcp::socket::wait_write,
                     [self = shared_from_this(), index, sent](beast::error_code wait_ec) {
                       self->DisarmTimer();
                       if (wait_ec) return self->OnWritten(wait_ec, 0);
                       self->SendFileRange(index, sent);
                     });
}

void HttpConnection::FailRangeBody(std::string why) {
  if (!why.empty() && outgoing_->error.empty()) outgoing_->error = std::move(why);
  CompleteRequest();
  Close();
}

void HttpConnection::FinishStream() {
  if (state_ == State::kClosed) return CompleteRequest();
  if (outgoing_->stream_length && outgoing_->streamed != *outgoing_->stream_length) {
    stream_failed_ = true;  // short body: only closing tells the client it is incomplete
    if (outgoing_->error.empty()) outgoing_->error = "stream ended before its Content-Length";
  }
  if (stream_failed_.load()) {
    CompleteRequest();
    return Close();
  }
  if (outgoing_->raw_stream) {
    // Without a declared length the body ends only when the connection closes.
    if (!outgoing_->stream_length) keep_alive_ = false;
    return OnWritten({}, 0);
  }
  ArmTimer(shared_.options.limits.write_timeout, Cancel::kWriteTimeout);
  net::async_write(socket_, net::buffer(kLastChunk.data(), kLastChunk.size()),
                   [self = shared_from_this()](beast::error_code ec, size_t bytes) {
                     self->DisarmTimer();
                     self->OnWritten(ec, bytes);
                   });
}

void HttpConnection::CompleteRequest() {
  if (status_ == 0) return;  // already recorded
  AccessLogEntry entry;
  entry.time = request_time_;
  entry.remote = remote_;
  entry.method = method_.empty() ? std::string_view("-") : std::string_view(method_);
  entry.target = target_;
  entry.route = route_name_;
  entry.status = status_;
  entry.bytes_in = bytes_in_;
  entry.bytes_out = bytes_out_;
  entry.duration = Clock::now() - request_start_;
  if (outgoing_) entry.error = outgoing_->error;
  shared_.RecordRequest(entry);
  status_ = 0;
}

// --- closing ---------------------------------------------------------------------------

void HttpConnection::LingerClose() {
  if (state_ == State::kClosed) return;
  state_ = State::kClosing;
  body_ = std::string();  // a refused or failed body is not needed any more
  reservation_.Reset();
  beast::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_send, ignored);
  if (!drain_buffer_) drain_buffer_ = std::make_unique<char[]>(kDrainBufferSize);
  ArmTimer(shared_.options.limits.close_linger, Cancel::kLinger);
  Drain();
}

void HttpConnection::Drain() {
  socket_.async_read_some(net::buffer(drain_buffer_.get(), kDrainBufferSize),
                          [self = shared_from_this()](beast::error_code ec, size_t bytes) {
                            self->drained_ += bytes;
                            if (ec || self->drained_ > kMaxDrainBytes) return self->Close();
                            self->Drain();
                          });
}

void HttpConnection::Close() {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  DisarmTimer();
  beast::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
}

}  // namespace xet::server_internal
