#include "http/http_server.h"

#include <pthread.h>
#include <signal.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <future>
#include <thread>
#include <vector>

#include "http/http_connection.h"

namespace xet {

using server_internal::Admission;
using server_internal::HttpConnection;
using server_internal::ServerShared;
namespace net = server_internal::net;
namespace beast = server_internal::beast;
using tcp = server_internal::tcp;

class HttpServer::Impl {
 public:
  Impl(Router router, ServerOptions options, std::shared_ptr<Metrics> metrics)
      : shared_(std::move(options), std::move(router), std::move(metrics)),
        io_(std::max(1, shared_.options.io_threads)),
        work_(net::make_work_guard(io_)),
        acceptor_(net::make_strand(io_)),
        retry_timer_(acceptor_.get_executor()),
        housekeeping_timer_(acceptor_.get_executor()) {}

  Status Listen() {
    beast::error_code ec;
    net::ip::address address = net::ip::make_address(shared_.options.address, ec);
    if (ec) {
      return Status::InvalidArgument("invalid listen address: " + shared_.options.address);
    }
    tcp::endpoint endpoint(address, shared_.options.port);
    std::string where = shared_.options.address + ":" + std::to_string(shared_.options.port);
    if (acceptor_.open(endpoint.protocol(), ec)) return Status::IoError("socket: " + ec.message());
    acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    if (acceptor_.bind(endpoint, ec)) return Status::IoError("bind " + where + ": " + ec.message());
    if (acceptor_.listen(net::socket_base::max_listen_connections, ec)) {
      return Status::IoError("listen " + where + ": " + ec.message());
    }
    port_ = acceptor_.local_endpoint(ec).port();
    return Status::Ok();
  }

  void Run() {
    net::post(acceptor_.get_executor(), [this] {
      Accept();
      Housekeep();
    });
    int n = std::max(1, shared_.options.io_threads);
    for (int i = 0; i < n; ++i) {
      threads_.emplace_back([this] {
        // sendfile(2) has no MSG_NOSIGNAL: writing a file body to a client that has gone
        // must fail with EPIPE, not kill the process. Blocked here, a SIGPIPE the kernel
        // raises for this thread stays pending and is never delivered.
        sigset_t pipe;
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
        io_.run();
      });
    }
  }

  void Stop() {
    {
      MutexLock lock(stop_mu_);
      if (stop_started_) {
        while (!stop_done_) stop_cv_.Wait(stop_mu_);
        return;
      }
      stop_started_ = true;
    }
    shared_.stopping = true;
    // 1. Stop accepting: new connections are refused from here on.
    if (threads_.empty()) {  // never started running (Listen failed)
      beast::error_code ignored;
      acceptor_.close(ignored);
    } else {
      std::promise<void> closed;
      net::post(acceptor_.get_executor(), [this, &closed] {
        beast::error_code ignored;
        acceptor_.close(ignored);
        retry_timer_.cancel();
        housekeeping_timer_.cancel();
        closed.set_value();
      });
      closed.get_future().wait();
    }
    // 2. Idle connections close now; busy ones after their response.
    ForEachConnection([](HttpConnection& c) { c.BeginShutdown(); });
    auto deadline = std::chrono::steady_clock::now() + shared_.options.limits.shutdown_deadline;
    WaitForConnectionsClosed(deadline);
    // 3. Past the deadline: cut whatever remains.
    if (!AllClosed()) {
      shared_.aborted = true;
      ForEachConnection([](HttpConnection& c) { c.ForceClose(); });
      WaitForConnectionsClosed(std::chrono::steady_clock::now() + std::chrono::seconds(1));
    }
    // 4. Handlers still running finish (they cannot be interrupted); then I/O stops.
    shared_.workers.join();
    work_.reset();
    io_.stop();
    for (std::thread& t : threads_) t.join();
    {
      MutexLock lock(stop_mu_);
      stop_done_ = true;
    }
    stop_cv_.NotifyAll();
  }

  void Wait() {
    MutexLock lock(stop_mu_);
    while (!stop_done_) stop_cv_.Wait(stop_mu_);
  }

  uint16_t port() const { return port_; }
  const std::shared_ptr<Metrics>& metrics() const { return shared_.metrics; }

 private:
  void Accept() {
    acceptor_.async_accept(net::make_strand(io_), [this](beast::error_code ec, tcp::socket socket) {
      if (ec) {
        if (!acceptor_.is_open() || shared_.stopping.load()) return;
        // Out of descriptors or a transient error: back off briefly, then keep accepting.
        retry_timer_.expires_after(std::chrono::milliseconds(50));
        retry_timer_.async_wait([this](beast::error_code timer_ec) {
          if (!timer_ec && acceptor_.is_open()) Accept();
        });
        return;
      }
      beast::error_code remote_ec;
      tcp::endpoint remote = socket.remote_endpoint(remote_ec);
      std::string address = remote_ec ? std::string() : remote.address().to_string();
      Admission admission = shared_.Admit(address);
      std::make_shared<HttpConnection>(shared_, std::move(socket), std::move(address), admission)
          ->Start();
      Accept();
    });
  }

  // Once a second: publishes the body pool's size, and once no request body has been in
  // flight for kTrimAfter, frees the pooled body buffers and hands freed heap memory back to
  // the system (malloc_trim), on a worker (it may take a few milliseconds).
  void Housekeep() {
    static constexpr auto kTick = std::chrono::seconds(1);
    static constexpr auto kTrimAfter = std::chrono::seconds(2);
    shared_.body_pool_bytes.Set(static_cast<int64_t>(shared_.body_buffers.pooled_bytes()));
    const auto idle_from = shared_.body_budget.IdleFrom();
    if (idle_from && *idle_from != trimmed_idle_from_ &&
        *idle_from <= std::chrono::steady_clock::now() - kTrimAfter) {
      trimmed_idle_from_ = *idle_from;
      net::post(shared_.workers, [this] {
        shared_.body_buffers.Clear();
        shared_.body_pool_bytes.Set(0);
#if defined(__GLIBC__)
        malloc_trim(0);
#endif
      });
    }
    housekeeping_timer_.expires_after(kTick);
    housekeeping_timer_.async_wait([this](beast::error_code ec) {
      if (!ec && acceptor_.is_open()) Housekeep();
    });
  }

  template <typename F>
  void ForEachConnection(F f) {
    std::vector<std::shared_ptr<HttpConnection>> live;
    {
      MutexLock lock(shared_.mu);
      for (auto& [id, weak] : shared_.connections) {
        if (auto c = weak.lock()) live.push_back(std::move(c));
      }
    }
    for (auto& c : live) f(*c);
  }

  bool AllClosed() {
    MutexLock lock(shared_.mu);
    return shared_.connections.empty();
  }

  // Returns once every connection is gone or `deadline` has passed.
  void WaitForConnectionsClosed(std::chrono::steady_clock::time_point deadline) {
    MutexLock lock(shared_.mu);
    while (!shared_.connections.empty()) {
      if (shared_.cv.WaitUntil(shared_.mu, deadline) == std::cv_status::timeout) return;
    }
  }

  // Declaration order matters: destruction runs bottom-up, so the I/O context (and the
  // connections its pending handlers own) goes before the state they point into.
  ServerShared shared_;
  net::io_context io_;
  net::executor_work_guard<net::io_context::executor_type> work_;
  tcp::acceptor acceptor_;
  net::steady_timer retry_timer_;
  net::steady_timer housekeeping_timer_;
  // The IdleFrom() the last trim was for (on the acceptor's strand).
  std::chrono::steady_clock::time_point trimmed_idle_from_{};
  std::vector<std::thread> threads_;
  uint16_t port_ = 0;

  Mutex stop_mu_;
  CondVar stop_cv_;
  bool stop_started_ GUARDED_BY(stop_mu_) = false;
  bool stop_done_ GUARDED_BY(stop_mu_) = false;
};

namespace {

void AddBuiltinRoutes(Router& router, const std::shared_ptr<Metrics>& metrics) {
  if (!router.Has("GET", "/healthz")) {
    Status st = router.Add(
        "GET", "/healthz",
        [](const HttpRequest&, const RouteParams&) {
          return HttpResponse::Json(R"({"status":"ok"})");
        },
        RouteOptions{.max_body_bytes = 0, .name = "healthz"});
    (void)st;
  }
  if (!router.Has("GET", "/metrics")) {
    std::weak_ptr<Metrics> weak = metrics;
    Status st = router.Add(
        "GET", "/metrics",
        [weak](const HttpRequest&, const RouteParams&) {
          HttpResponse response;
          response.headers.Add("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
          if (auto m = weak.lock()) response.body = m->Expose();
          return response;
        },
        RouteOptions{.max_body_bytes = 0, .name = "metrics"});
    (void)st;
  }
}

}  // namespace

Result<std::unique_ptr<HttpServer>> HttpServer::Start(Router router, ServerOptions options) {
  std::shared_ptr<Metrics> metrics =
      options.metrics ? options.metrics : std::make_shared<Metrics>();
  options.metrics = metrics;
  AddBuiltinRoutes(router, metrics);
  auto impl = std::make_unique<Impl>(std::move(router), std::move(options), std::move(metrics));
  Status st = impl->Listen();
  if (!st.ok()) {
    impl->Stop();
    return st;
  }
  impl->Run();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() {
  if (impl_) impl_->Stop();
}

uint16_t HttpServer::port() const { return impl_->port(); }
Metrics& HttpServer::metrics() { return *impl_->metrics(); }
const std::shared_ptr<Metrics>& HttpServer::shared_metrics() const { return impl_->metrics(); }
void HttpServer::Stop() { impl_->Stop(); }
void HttpServer::Wait() { impl_->Wait(); }

}  // namespace xet
