// The server's resource limits over loopback: pre-body route checks (a refused request's
// body is never read), body buffers that grow with the bytes that arrive, the budget for
// bodies in flight, and the connection policy (shedding, per-address cap, the short first
// header timeout when busy).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "http/body_budget.h"
#include "http/http_server.h"
#include "support/http_test_client.h"

namespace xet {
namespace {

using std::chrono::milliseconds;
using testing::TestHttpClient;
using Clock = std::chrono::steady_clock;

// Byte i of a test body: changes every byte and drifts every 4096, so a shifted, dropped or
// repeated piece of the body shows.
char PatternByte(size_t i) { return static_cast<char>((i * 31 + i / 4096) % 253); }
std::string PatternBytes(size_t n) {
  std::string out(n, '\0');
  for (size_t i = 0; i < n; ++i) out[i] = PatternByte(i);
  return out;
}

std::string Post(std::string_view path, size_t length, std::string_view extra_headers = "") {
  return "POST " + std::string(path) +
         " HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(length) + "\r\n" +
         std::string(extra_headers) + "\r\n";
}

// A connection from a chosen loopback source address (127.0.0.X), for the per-address cap.
class SourceBoundSocket {
 public:
  SourceBoundSocket(const char* source, uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in local{};
    local.sin_family = AF_INET;
    ::inet_pton(AF_INET, source, &local.sin_addr);
    sockaddr_in remote{};
    remote.sin_family = AF_INET;
    remote.sin_port = htons(port);
    ::inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr);
    connected_ = ::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) == 0 &&
                 ::connect(fd_, reinterpret_cast<sockaddr*>(&remote), sizeof remote) == 0;
  }
  ~SourceBoundSocket() { ::close(fd_); }
  SourceBoundSocket(const SourceBoundSocket&) = delete;
  SourceBoundSocket& operator=(const SourceBoundSocket&) = delete;

  bool connected() const { return connected_; }
  bool Send(std::string_view data) {
    return ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(data.size());
  }
  // The status code of the response's first line ("" on close or after 5 s).
  std::string ReadStatus() {
    timeval tv{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 12) return "";
    return std::string(buf + 9, 3);
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

class HttpServerLimitsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (server_) server_->Stop();
  }

  void Start(ServerLimits limits = {}) {
    ServerOptions options;
    options.address = "127.0.0.1";
    options.port = 0;
    options.limits = limits;
    options.worker_threads = 4;
    options.access_log = nullptr;
    auto server = HttpServer::Start(MakeRouter(), std::move(options));
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
  }

  Router MakeRouter() {
    Router router;
    // /guarded: "Bearer good" passes its pre-body check, "Bearer reader" is 403, "Bearer
    // boom" makes the check throw, anything else is 401.
    RouteOptions guarded{.max_body_bytes = 64 << 20, .name = "guarded"};
    guarded.pre_body = [this](const HttpRequest& head,
                              const RouteParams& params) -> std::optional<HttpResponse> {
      {
        std::lock_guard lock(mu_);
        checked_ = head.method + " " + head.path + "?" + head.query + " id=" + params.at("id") +
                   " body=" + std::to_string(head.body.size());
      }
      const std::string auth(head.headers.Get("Authorization").value_or(""));
      if (auth == "Bearer boom") throw std::runtime_error("check failed");
      if (auth == "Bearer good") return std::nullopt;
      if (auth == "Bearer reader") return HttpResponse::Error(403, "read-only token");
      return HttpResponse::Error(401, "a token is needed");
    };
    EXPECT_TRUE(
        router
            .Add(
                "POST", "/guarded/{id}",
                [this](const HttpRequest& req, const RouteParams&) {
                  handled_.fetch_add(1);
                  return HttpResponse::Json(nlohmann::json{{"size", req.body.size()}}.dump());
                },
                guarded)
            .ok());
    // /check: the body's size and how many of its bytes differ from PatternBytes.
    EXPECT_TRUE(router
                    .Add(
                        "POST", "/check",
                        [](const HttpRequest& req, const RouteParams&) {
                          size_t wrong = 0;
                          for (size_t i = 0; i < req.body.size(); ++i) {
                            wrong += req.body[i] != PatternByte(i);
                          }
                          return HttpResponse::Json(
                              nlohmann::json{{"size", req.body.size()}, {"wrong", wrong}}.dump());
                        },
                        RouteOptions{.max_body_bytes = 64 << 20, .name = "check"})
                    .ok());
    EXPECT_TRUE(router
                    .Add("GET", "/small",
                         [](const HttpRequest&, const RouteParams&) {
                           return HttpResponse::Json(R"({"small":true})");
                         })
                    .ok());
    return router;
  }

  uint64_t BodyBytesIn(const std::string& route) {
    return server_->metrics()
        .GetCounter("xetstore_http_request_body_bytes_total", "Request body bytes received.",
                    {{"route", route}})
        .Value();
  }
  int64_t Gauge(const std::string& name) { return server_->metrics().GetGauge(name, "").Value(); }
  uint64_t Counter(const std::string& name) {
    return server_->metrics().GetCounter(name, "").Value();
  }
  std::string Checked() {
    std::lock_guard lock(mu_);
    return checked_;
  }

  // Sends `body` as /check's body; expects 200 with every byte in place.
  void ExpectCheckedBody(TestHttpClient& client, size_t size) {
    const std::string body = PatternBytes(size);
    ASSERT_TRUE(client.Send(Post("/check", size) + body));
    auto response = client.ReadResponse(false, std::chrono::seconds(20));
    ASSERT_TRUE(response);
    ASSERT_EQ(response->status, 200) << response->body;
    const auto j = nlohmann::json::parse(response->body);
    EXPECT_EQ(j["size"], size);
    EXPECT_EQ(j["wrong"], 0);
  }

  std::unique_ptr<HttpServer> server_;
  std::atomic<int> handled_{0};
  std::mutex mu_;
  std::string checked_;
};

// --- pre-body checks -----------------------------------------------------------------------

TEST_F(HttpServerLimitsTest, PreBodyCheckRefusesBefore100ContinueAndReadsNoBody) {
  Start();
  for (const char* token : {"", "Authorization: Bearer reader\r\n"}) {
    TestHttpClient client(server_->port());
    ASSERT_TRUE(client.Send(
        Post("/guarded/7?x=1", 50'000'000, std::string(token) + "Expect: 100-continue\r\n")));
    // The refusal is the first thing the client hears: no 100 Continue asked it for the body.
    const std::string raw = client.ReadSome();
    const std::string want = *token ? "HTTP/1.1 403" : "HTTP/1.1 401";
    EXPECT_EQ(raw.substr(0, want.size()), want) << raw;
    EXPECT_NE(raw.find("Connection: close"), std::string::npos) << raw;
    EXPECT_TRUE(client.WaitForClose());
  }
  EXPECT_EQ(Checked(), "POST /guarded/7?x=1 id=7 body=0");
  EXPECT_EQ(handled_.load(), 0);
  EXPECT_EQ(BodyBytesIn("guarded"), 0u);
  EXPECT_EQ(Gauge("xetstore_http_body_bytes_reserved"), 0);
}

TEST_F(HttpServerLimitsTest, PreBodyCheckRefusesAStartedBodyWithoutWaitingForIt) {
  Start();
  TestHttpClient client(server_->port());
  // Headers and 7 bytes of a declared 130 MB (over the route limit would be 413: use 60 MB).
  ASSERT_TRUE(client.Send(Post("/guarded/1", 60'000'000) + "1234567"));
  auto response = client.ReadResponse(false, std::chrono::seconds(2));
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 401);
  EXPECT_TRUE(nlohmann::json::parse(response->body).contains("error"));
  EXPECT_EQ(handled_.load(), 0);
  EXPECT_EQ(BodyBytesIn("guarded"), 0u);
}

TEST_F(HttpServerLimitsTest, PreBodyCheckThatPassesLetsTheBodyThroughAndOneThatThrowsIs500) {
  Start();
  TestHttpClient client(server_->port());
  ASSERT_TRUE(
      client.Send(Post("/guarded/2", 5, "Authorization: Bearer good\r\nExpect: 100-continue\r\n")));
  EXPECT_EQ(client.ReadSome(), "HTTP/1.1 100 Continue\r\n\r\n");
  ASSERT_TRUE(client.Send("hello"));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(nlohmann::json::parse(response->body)["size"], 5);
  EXPECT_EQ(handled_.load(), 1);

  // A request without a body is not checked before its body: the handler decides.
  ASSERT_TRUE(client.Send(Post("/guarded/3", 0)));
  response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(handled_.load(), 2);

  TestHttpClient thrower(server_->port());
  ASSERT_TRUE(thrower.Send(Post("/guarded/4", 5, "Authorization: Bearer boom\r\n") + "hello"));
  response = thrower.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 500);
  EXPECT_EQ(handled_.load(), 2);
}

TEST_F(HttpServerLimitsTest, PreBodyCheckAlsoGuardsChunkedBodies) {
  Start();
  TestHttpClient client(server_->port());
  ASSERT_TRUE(client.Send(
      "POST /guarded/5 HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel"));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 401);
  EXPECT_EQ(handled_.load(), 0);
}

// --- growing body buffers ------------------------------------------------------------------

TEST_F(HttpServerLimitsTest, BodiesOfEverySizeArriveWhole) {
  Start();
  TestHttpClient client(server_->port());
  // Around the first buffer's size, the pool threshold and several doublings.
  for (size_t size : {size_t{1}, size_t{10}, size_t{65535}, size_t{65536}, size_t{65537},
                      size_t{(1 << 20) + 3}, size_t{(5 << 20) + 17}, size_t{20 << 20}}) {
    SCOPED_TRACE(size);
    ExpectCheckedBody(client, size);
  }
  // Smaller bodies after larger ones (reused pooled buffers) are exact too.
  ExpectCheckedBody(client, 3 << 20);
  ExpectCheckedBody(client, 100);
}

TEST_F(HttpServerLimitsTest, BodySentInSlowPiecesGrowsAsItArrives) {
  Start();
  TestHttpClient client(server_->port());
  const size_t size = 3 << 20;
  const std::string body = PatternBytes(size);
  ASSERT_TRUE(client.Send(Post("/check", size)));
  for (size_t sent = 0; sent < size; sent += 256 << 10) {
    ASSERT_TRUE(client.Send(std::string_view(body).substr(sent, 256 << 10)));
    std::this_thread::sleep_for(milliseconds(5));
  }
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  ASSERT_EQ(response->status, 200);
  const auto j = nlohmann::json::parse(response->body);
  EXPECT_EQ(j["size"], size);
  EXPECT_EQ(j["wrong"], 0);
}

TEST_F(HttpServerLimitsTest, ChunkedBodiesArriveWhole) {
  Start();
  TestHttpClient client(server_->port());
  const size_t size = (2 << 20) + 11;
  const std::string body = PatternBytes(size);
  std::string request = "POST /check HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (size_t at = 0; at < size; at += 100'000) {
    const size_t n = std::min<size_t>(100'000, size - at);
    char hex[32];
    std::snprintf(hex, sizeof hex, "%zx\r\n", n);
    request += hex + body.substr(at, n) + "\r\n";
  }
  request += "0\r\n\r\n";
  ASSERT_TRUE(client.Send(request));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  ASSERT_EQ(response->status, 200);
  const auto j = nlohmann::json::parse(response->body);
  EXPECT_EQ(j["size"], size);
  EXPECT_EQ(j["wrong"], 0);
}

// --- the budget for bodies in flight -------------------------------------------------------

TEST_F(HttpServerLimitsTest, BodyOverTheBudgetIs503WithRetryAfterBeforeItsBody) {
  ServerLimits limits;
  limits.max_body_bytes_in_flight = 1 << 20;
  Start(limits);
  const size_t held = 800 << 10;
  TestHttpClient a(server_->port());
  const std::string body = PatternBytes(held);
  ASSERT_TRUE(a.Send(Post("/check", held) + body.substr(0, 1000)));  // stalls mid-body
  // The stalled body holds its declared length.
  for (int i = 0; i < 100 && Gauge("xetstore_http_body_bytes_reserved") == 0; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(Gauge("xetstore_http_body_bytes_reserved"), static_cast<int64_t>(held));

  TestHttpClient b(server_->port());
  ASSERT_TRUE(b.Send(Post("/check", 400 << 10, "Expect: 100-continue\r\n")));
  const std::string raw = b.ReadSome();
  EXPECT_EQ(raw.substr(0, 12), "HTTP/1.1 503") << raw;  // no 100 Continue first
  EXPECT_NE(raw.find("Retry-After: 1"), std::string::npos) << raw;
  EXPECT_NE(raw.find("\"error\""), std::string::npos) << raw;
  EXPECT_EQ(Counter("xetstore_http_body_budget_refusals_total"), 1u);

  // A body that fits beside the stalled one is served.
  TestHttpClient c(server_->port());
  ExpectCheckedBody(c, 100 << 10);

  // Once the stalled body completes, the budget is free again.
  ASSERT_TRUE(a.Send(std::string_view(body).substr(1000)));
  auto response = a.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  for (int i = 0; i < 100 && Gauge("xetstore_http_body_bytes_reserved") != 0; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(Gauge("xetstore_http_body_bytes_reserved"), 0);
  TestHttpClient d(server_->port());
  ExpectCheckedBody(d, 1 << 20);  // the whole budget
}

TEST_F(HttpServerLimitsTest, AbandonedOrMalformedBodiesGiveTheirReservationBack) {
  ServerLimits limits;
  limits.max_body_bytes_in_flight = 4 << 20;
  Start(limits);
  {
    TestHttpClient gone(server_->port());  // leaves mid-body
    ASSERT_TRUE(gone.Send(Post("/check", 3 << 20) + PatternBytes(100'000)));
    for (int i = 0; i < 100 && Gauge("xetstore_http_body_bytes_reserved") == 0; ++i) {
      std::this_thread::sleep_for(milliseconds(10));
    }
    EXPECT_EQ(Gauge("xetstore_http_body_bytes_reserved"), 3 << 20);
  }
  TestHttpClient bad_chunk(server_->port());  // a chunk size that is not hex
  ASSERT_TRUE(bad_chunk.Send(
      "POST /check HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n"));
  auto response = bad_chunk.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 400);
  for (int i = 0; i < 200 && Gauge("xetstore_http_body_bytes_reserved") != 0; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(Gauge("xetstore_http_body_bytes_reserved"), 0);
  TestHttpClient next(server_->port());  // the whole budget is usable again
  ExpectCheckedBody(next, 4 << 20);
}

TEST_F(HttpServerLimitsTest, ChunkedBodyGrowingPastTheBudgetIs503) {
  ServerLimits limits;
  limits.max_body_bytes_in_flight = 1 << 20;
  Start(limits);
  TestHttpClient client(server_->port());
  ASSERT_TRUE(client.Send("POST /check HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"));
  std::optional<testing::TestHttpResponse> response;
  const std::string chunk = "10000\r\n" + std::string(0x10000, 'x') + "\r\n";
  for (int i = 0; i < 64; ++i) {  // up to 4 MiB
    if (!client.Send(chunk)) break;
  }
  response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 503);
  EXPECT_EQ(response->Header("Retry-After"), "1");
  client.Close();
  for (int i = 0; i < 200 && Gauge("xetstore_http_body_bytes_reserved") != 0; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(Gauge("xetstore_http_body_bytes_reserved"), 0);
}

TEST(BodyBudgetTest, ReservesWithinTheLimitAndGivesBackOnDestruction) {
  server_internal::BodyBudget budget(100, nullptr);
  auto a = budget.Reserve(60);
  ASSERT_TRUE(a);
  EXPECT_FALSE(budget.Reserve(41));
  EXPECT_FALSE(budget.IdleFrom());
  {
    auto b = budget.Reserve(40);
    ASSERT_TRUE(b);
    EXPECT_EQ(budget.reserved(), 100u);
    EXPECT_FALSE(a->GrowTo(61));  // refused: holds what it held
    EXPECT_EQ(a->bytes(), 60u);
  }
  EXPECT_EQ(budget.reserved(), 60u);
  EXPECT_TRUE(a->GrowTo(100));
  EXPECT_TRUE(a->GrowTo(50));  // already holds more
  EXPECT_EQ(budget.reserved(), 100u);
  server_internal::BodyReservation moved = std::move(*a);
  EXPECT_EQ(a->bytes(), 0u);
  EXPECT_FALSE(a->GrowTo(1));  // empty after the move
  moved.Reset();
  EXPECT_EQ(budget.reserved(), 0u);
  EXPECT_TRUE(budget.IdleFrom());
  EXPECT_FALSE(budget.Reserve(UINT64_MAX));  // no overflow past the limit

  server_internal::BodyBudget unlimited(0, nullptr);
  EXPECT_TRUE(unlimited.Reserve(uint64_t{1} << 62));
}

// --- connection policy ---------------------------------------------------------------------

TEST_F(HttpServerLimitsTest, AtTheLimitTheOldestIdleConnectionIsShed) {
  ServerLimits limits;
  limits.max_connections = 3;
  Start(limits);
  TestHttpClient keep_alive(server_->port());  // oldest: idle after one request
  ASSERT_TRUE(keep_alive.Send("GET /small HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_TRUE(keep_alive.ReadResponse());
  TestHttpClient busy(server_->port());  // mid-request: never shed
  ASSERT_TRUE(busy.Send(Post("/check", 1000) + "x"));
  TestHttpClient silent(server_->port());  // connected, sent nothing
  std::this_thread::sleep_for(milliseconds(100));

  TestHttpClient newcomer(server_->port());
  ASSERT_TRUE(newcomer.Send("GET /small HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto response = newcomer.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_TRUE(keep_alive.WaitForClose(std::chrono::seconds(2)));
  EXPECT_EQ(Counter("xetstore_http_shed_connections_total"), 1u);

  // The next newcomer sheds the silent connection (the oldest idle one left), not `busy`.
  TestHttpClient second(server_->port());
  ASSERT_TRUE(second.Send("GET /small HTTP/1.1\r\nHost: t\r\n\r\n"));
  response = second.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_TRUE(silent.WaitForClose(std::chrono::seconds(2)));
  EXPECT_EQ(Counter("xetstore_http_shed_connections_total"), 2u);
  ASSERT_TRUE(busy.Send(PatternBytes(999)));
  response = busy.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
}

// Connections coming and going at the limit while newcomers shed them: the server keeps
// serving. (A shed scan that dropped the last reference to a closing connection while
// holding the registry lock once deadlocked the server; that race is narrow and this test
// does not reliably hit it: tests/hardening/memory-and-connections, with 2,000
// connections, did.)
TEST_F(HttpServerLimitsTest, SheddingUnderChurnKeepsTheServerServing) {
  ServerLimits limits;
  limits.max_connections = 64;
  Start(limits);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([this, t] {
      // Mostly silent connections, so nearly every newcomer sheds one; 4 x 100 held open
      // (under a default 1,024 descriptors with the server's own).
      std::deque<std::unique_ptr<TestHttpClient>> open;
      for (int i = 0; i < 1000; ++i) {
        auto c = std::make_unique<TestHttpClient>(server_->port());
        if ((i + t) % 16 == 0 && c->Send("GET /small HTTP/1.1\r\nHost: t\r\n\r\n")) {
          c->ReadResponse(false, milliseconds(200));
        }
        open.push_back(std::move(c));
        if (open.size() > 100) open.pop_front();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  TestHttpClient last(server_->port());
  ASSERT_TRUE(last.Send("GET /small HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto response = last.ReadResponse(false, std::chrono::seconds(3));
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_GT(Counter("xetstore_http_shed_connections_total"), 0u);
}

TEST_F(HttpServerLimitsTest, WhenEveryConnectionIsMidRequestANewcomerGets503) {
  ServerLimits limits;
  limits.max_connections = 2;
  Start(limits);
  TestHttpClient a(server_->port());
  TestHttpClient b(server_->port());
  for (TestHttpClient* c : {&a, &b}) ASSERT_TRUE(c->Send(Post("/check", 10) + "x"));
  std::this_thread::sleep_for(milliseconds(100));
  TestHttpClient c(server_->port());
  auto rejected = c.ReadResponse();
  ASSERT_TRUE(rejected);
  EXPECT_EQ(rejected->status, 503);
  EXPECT_TRUE(c.WaitForClose());
  EXPECT_EQ(Counter("xetstore_http_shed_connections_total"), 0u);
}

TEST_F(HttpServerLimitsTest, OneAddressIsCappedOthersAreNot) {
  ServerLimits limits;
  limits.max_connections_per_address = 2;
  Start(limits);
  SourceBoundSocket a("127.0.0.1", server_->port());
  SourceBoundSocket b("127.0.0.1", server_->port());
  ASSERT_TRUE(a.connected() && b.connected());
  std::this_thread::sleep_for(milliseconds(100));
  SourceBoundSocket third("127.0.0.1", server_->port());
  ASSERT_TRUE(third.connected());
  EXPECT_EQ(third.ReadStatus(), "503");

  SourceBoundSocket other("127.0.0.2", server_->port());
  ASSERT_TRUE(other.connected());
  ASSERT_TRUE(other.Send("GET /small HTTP/1.1\r\nHost: t\r\n\r\n"));
  EXPECT_EQ(other.ReadStatus(), "200");
  // The capped address's own connections are served.
  ASSERT_TRUE(a.Send("GET /small HTTP/1.1\r\nHost: t\r\n\r\n"));
  EXPECT_EQ(a.ReadStatus(), "200");
}

TEST_F(HttpServerLimitsTest, NearTheLimitNewConnectionsGetTheShortHeaderTimeout) {
  ServerLimits limits;
  limits.max_connections = 4;
  limits.header_timeout = milliseconds(5000);
  limits.busy_header_timeout = milliseconds(300);
  Start(limits);
  TestHttpClient first(server_->port());  // 1 of 4: the normal timeout
  TestHttpClient second(server_->port());
  std::this_thread::sleep_for(milliseconds(50));
  const auto start = Clock::now();
  TestHttpClient third(server_->port());   // 3 of 4: busy, sends nothing
  TestHttpClient fourth(server_->port());  // busy, starts its headers but never ends them
  ASSERT_TRUE(fourth.Send("GET /small HTTP/1.1\r\n"));
  EXPECT_TRUE(third.WaitForClose(std::chrono::seconds(3)));  // silent: closed silently
  auto response = fourth.ReadResponse(false, std::chrono::seconds(3));
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 408);
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
  // The first connection still has its normal time.
  ASSERT_TRUE(first.Send("GET /small HTTP/1.1\r\nHost: t\r\n\r\n"));
  response = first.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
}

}  // namespace
}  // namespace xet
