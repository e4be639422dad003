#include "http/http_server.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <fstream>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "http/response_compression.h"
#include "http/shutdown_signals.h"
#include "support/http_test_client.h"
#include "support/temp_dir.h"

namespace xet {
namespace {

using std::chrono::milliseconds;
using testing::TestHttpClient;
using testing::TestHttpResponse;
using Clock = std::chrono::steady_clock;

std::string GzipDecompress(const std::string& data) {
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, 15 + 16), Z_OK);
  std::string out;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  char buf[16384];
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof buf - zs.avail_out);
  }
  EXPECT_EQ(rc, Z_STREAM_END);
  inflateEnd(&zs);
  return out;
}

std::string ZstdDecompress(const std::string& data) {
  unsigned long long size = ZSTD_getFrameContentSize(data.data(), data.size());
  EXPECT_NE(size, ZSTD_CONTENTSIZE_ERROR);
  EXPECT_NE(size, ZSTD_CONTENTSIZE_UNKNOWN);
  std::string out(size, '\0');
  size_t n = ZSTD_decompress(out.data(), out.size(), data.data(), data.size());
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

std::string BigJson() {
  nlohmann::json items = nlohmann::json::array();
  for (int i = 0; i < 200; ++i) items.push_back({{"index", i}, {"name", "item"}});
  return nlohmann::json({{"items", items}}).dump();
}

std::string Get(std::string_view path, std::string_view extra_headers = "") {
  return "GET " + std::string(path) + " HTTP/1.1\r\nHost: test\r\n" + std::string(extra_headers) +
         "\r\n";
}

// The file behind the /file routes: byte i is (i * 7 + i / 4096) mod 251, so a piece sent
// from the wrong offset shows.
// (Every fixture builds 5 MiB of these, so the loop writes into a sized string.)
char FileByte(uint64_t i) { return static_cast<char>((i * 7 + i / 4096) % 251); }
std::string FileBytes(uint64_t offset, uint64_t length) {
  std::string out(length, '\0');
  for (uint64_t i = 0; i < length; ++i) out[i] = FileByte(offset + i);
  return out;
}
constexpr uint64_t kFileBytes = 5 << 20;  // more than one sendfile call's worth
constexpr uint64_t kSlowBodyBytes = 24 << 20;

class HttpServerTest : public ::testing::Test {
 protected:
  HttpServerTest() {
    std::ofstream f(file_path_, std::ios::binary);
    const std::string bytes = FileBytes(0, kFileBytes);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }

  // A RangeBody of `pieces` of text and ranges over the fixture's bytes: from its file when
  // `source` is "file", else from a shared buffer holding the same bytes ("memory").
  std::shared_ptr<const RangeBody> BodyOf(std::string_view source,
                                          std::vector<RangeBody::Piece> pieces) {
    auto body = std::make_shared<RangeBody>();
    if (source == "file") {
      body->file = UniqueFd(::open(file_path_.c_str(), O_RDONLY | O_CLOEXEC));
      EXPECT_TRUE(body->file.valid());
    } else {
      body->memory = memory_;
    }
    body->pieces = std::move(pieces);
    return body;
  }

  void TearDown() override {
    if (server_) server_->Stop();
  }

  void Start(ServerLimits limits = {}, int worker_threads = 4) {
    ServerOptions options;
    options.address = "127.0.0.1";
    options.port = 0;
    options.limits = limits;
    options.worker_threads = worker_threads;
    options.access_log = [this](std::string_view line) {
      std::lock_guard lock(log_mu_);
      log_.emplace_back(line);
    };
    auto server = HttpServer::Start(MakeRouter(), std::move(options));
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    ASSERT_NE(server_->port(), 0);
  }

  Router MakeRouter() {
    Router router;
    auto add = [&](std::string_view method, std::string_view pattern, HttpHandler handler,
                   RouteOptions options = {}) {
      Status st = router.Add(method, pattern, std::move(handler), std::move(options));
      EXPECT_TRUE(st.ok()) << st.ToString();
    };
    add("GET", "/v1/xorbs/{prefix}/{hash}", [](const HttpRequest& req, const RouteParams& p) {
      nlohmann::json body = {{"method", req.method},
                             {"path", req.path},
                             {"prefix", p.at("prefix")},
                             {"hash", p.at("hash")},
                             {"x", req.QueryParam("x").value_or("")}};
      return HttpResponse::Json(body.dump());
    });
    add("POST", "/v1/xorbs/{prefix}/{hash}",
        [](const HttpRequest&, const RouteParams&) { return HttpResponse::Json("{}"); });
    add(
        "POST", "/echo",
        [](const HttpRequest& req, const RouteParams&) {
          HttpResponse response;
          response.headers.Add("Content-Type", "application/octet-stream");
          response.body = req.body;
          return response;
        },
        RouteOptions{.max_body_bytes = 1000, .name = "echo"});
    // What a large body held: its size and how many bytes differ from its first byte.
    add(
        "POST", "/count",
        [](const HttpRequest& req, const RouteParams&) {
          const size_t odd =
              req.body.empty() ? 0 : std::count_if(req.body.begin(), req.body.end(), [&](char c) {
                return c != req.body[0];
              });
          return HttpResponse::Json(nlohmann::json{{"size", req.body.size()}, {"odd", odd}}.dump());
        },
        RouteOptions{.max_body_bytes = 8 << 20, .name = "count"});
    add("GET", "/big",
        [](const HttpRequest&, const RouteParams&) { return HttpResponse::Json(BigJson()); });
    add("GET", "/small", [](const HttpRequest&, const RouteParams&) {
      return HttpResponse::Json(R"({"small":true})");
    });
    add("GET", "/throw", [](const HttpRequest&, const RouteParams&) -> HttpResponse {
      throw std::runtime_error("boom");
    });
    add("GET", "/stream", [](const HttpRequest&, const RouteParams&) {
      HttpResponse response;
      response.headers.Add("Content-Type", "text/plain");
      response.stream = [](const std::function<bool(std::string_view)>& write) {
        for (int i = 0; i < 5; ++i) {
          if (!write("piece-" + std::to_string(i) + "\n")) return;
        }
      };
      return response;
    });
    // A body shared read-only with others: three pieces, one of them empty.
    add("GET", "/shared", [this](const HttpRequest&, const RouteParams&) {
      HttpResponse response;
      response.headers.Add("Content-Type", "application/json");
      response.shared_body = shared_pieces_;
      return response;
    });
    // Streams with a declared length: /sized/N/M announces N bytes and writes M.
    add("GET", "/sized/{declared}/{written}", [this](const HttpRequest&, const RouteParams& p) {
      HttpResponse response;
      response.status = 206;
      response.content_length = std::stoull(p.at("declared"));
      const size_t total = std::stoull(p.at("written"));
      response.stream = [this, total](const std::function<bool(std::string_view)>& write) {
        size_t sent = 0;
        bool ok = true;
        while (sent < total && ok) {
          const size_t n = std::min<size_t>(7, total - sent);
          ok = write(std::string(n, static_cast<char>('a' + sent % 26)));
          if (ok) sent += n;
        }
        sized_.set_value({static_cast<int>(sent), ok});
      };
      return response;
    });
    // Range bodies over the fixture's bytes, from its file (/file...) and from memory
    // (/memory...), each as:
    // - /S: framing text around two ranges, the first one all of it (several sendfile calls
    //   or writes), then an empty text and an empty range;
    // - /S-short: a range that runs 10 bytes past the end of the bytes;
    // - /S-big: larger than the socket buffers, 12 times the bytes.
    for (const std::string source : {"file", "memory"}) {
      add("GET", "/" + source, [this, source](const HttpRequest&, const RouteParams&) {
        HttpResponse response;
        response.status = 206;
        response.range_body = BodyOf(
            source, {{"<head>", 0, kFileBytes}, {"|mid|", 100, 1000}, {"", 0, 0}, {"<end>", 0, 0}});
        return response;
      });
      add("GET", "/" + source + "-short", [this, source](const HttpRequest&, const RouteParams&) {
        HttpResponse response;
        response.range_body =
            BodyOf(source, {{"<head>", kFileBytes - 1000, 1010}, {"<end>", 0, 0}});
        return response;
      });
      add("GET", "/" + source + "-big", [this, source](const HttpRequest&, const RouteParams&) {
        HttpResponse response;
        response.range_body =
            BodyOf(source, std::vector<RangeBody::Piece>(12, RangeBody::Piece{"", 0, kFileBytes}));
        return response;
      });
    }
    // One 24 MiB range of memory: longer to read at a slow pace than the write timeout.
    add("GET", "/memory-slow", [](const HttpRequest&, const RouteParams&) {
      auto body = std::make_shared<RangeBody>();
      body->memory = std::make_shared<const std::string>(FileBytes(0, kSlowBodyBytes));
      body->pieces = {{"", 0, kSlowBodyBytes}};
      HttpResponse response;
      response.range_body = std::move(body);
      return response;
    });
    add("GET", "/endless", [this](const HttpRequest&, const RouteParams&) {
      HttpResponse response;
      response.stream = [this](const std::function<bool(std::string_view)>& write) {
        std::string piece(64 * 1024, 'x');
        int written = 0;
        bool ok = true;
        while (written < 100000 && (ok = write(piece))) ++written;
        endless_.set_value({written, ok});
      };
      return response;
    });
    add("GET", "/slow", [this](const HttpRequest&, const RouteParams&) {
      slow_started_.set_value();
      std::this_thread::sleep_for(milliseconds(800));
      return HttpResponse::Json(R"({"slow":"done"})");
    });
    return router;
  }

  std::vector<std::string> Log() {
    std::lock_guard lock(log_mu_);
    return log_;
  }

  std::unique_ptr<HttpServer> server_;
  std::mutex log_mu_;
  std::vector<std::string> log_;
  std::promise<std::pair<int, bool>> endless_;
  std::shared_ptr<const std::vector<std::string>> shared_pieces_ =
      std::make_shared<const std::vector<std::string>>(
          std::vector<std::string>{std::string(300000, 'x'), "", "{\"tail\":1}"});
  std::promise<std::pair<int, bool>> sized_;  // bytes accepted, last write's result
  std::promise<void> slow_started_;
  testing::TempDir file_dir_;
  const std::string file_path_ = file_dir_.path() + "/file";
  const std::shared_ptr<const std::string> memory_ =
      std::make_shared<const std::string>(FileBytes(0, kFileBytes));
};

TEST(HttpTypesTest, HeadersAndQueryParams) {
  HttpHeaders headers;
  headers.Add("Content-Type", "a");
  headers.Add("X-Thing", "1");
  EXPECT_EQ(headers.Get("content-type"), "a");
  headers.Set("CONTENT-TYPE", "b");
  EXPECT_EQ(headers.Get("Content-Type"), "b");
  EXPECT_EQ(headers.fields().size(), 2u);
  EXPECT_TRUE(headers.Remove("x-thing"));
  EXPECT_FALSE(headers.Get("X-Thing"));

  HttpRequest request;
  request.query = "a=1&b=hello+world&c=%2Fx%3D&flag&a=2";
  EXPECT_EQ(request.QueryParam("a"), "1");
  EXPECT_EQ(request.QueryParam("b"), "hello world");
  EXPECT_EQ(request.QueryParam("c"), "/x=");
  EXPECT_EQ(request.QueryParam("flag"), "");
  EXPECT_FALSE(request.QueryParam("missing"));

  HttpResponse error = HttpResponse::Error(404, "no \"such\" thing");
  EXPECT_EQ(error.status, 404);
  EXPECT_EQ(nlohmann::json::parse(error.body)["error"], "no \"such\" thing");
  EXPECT_EQ(error.headers.Get("Content-Type"), "application/json");
}

TEST(HttpCompressionTest, ChoosesEncodingFromAcceptEncoding) {
  EXPECT_EQ(ChooseContentEncoding(""), ContentEncoding::kIdentity);
  EXPECT_EQ(ChooseContentEncoding("gzip"), ContentEncoding::kGzip);
  EXPECT_EQ(ChooseContentEncoding("gzip, deflate, br, zstd"), ContentEncoding::kZstd);
  EXPECT_EQ(ChooseContentEncoding("zstd;q=0, gzip"), ContentEncoding::kGzip);
  EXPECT_EQ(ChooseContentEncoding("zstd;q=0.5, gzip;q=0.8"), ContentEncoding::kGzip);
  EXPECT_EQ(ChooseContentEncoding("*"), ContentEncoding::kZstd);
  EXPECT_EQ(ChooseContentEncoding("br, identity"), ContentEncoding::kIdentity);
  EXPECT_EQ(ChooseContentEncoding("gzip;q=0"), ContentEncoding::kIdentity);
}

TEST_F(HttpServerTest, RoutesWithParamsAnd404And405) {
  Start();
  TestHttpClient client(server_->port());
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.Send(Get("/v1/xorbs/default/abc%20def?x=1+2")));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  auto body = nlohmann::json::parse(response->body);
  EXPECT_EQ(body["method"], "GET");
  EXPECT_EQ(body["path"], "/v1/xorbs/default/abc def");
  EXPECT_EQ(body["prefix"], "default");
  EXPECT_EQ(body["hash"], "abc def");
  EXPECT_EQ(body["x"], "1 2");

  ASSERT_TRUE(client.Send(Get("/nope")));
  response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 404);
  EXPECT_EQ(nlohmann::json::parse(response->body)["error"], "not found");

  ASSERT_TRUE(client.Send("DELETE /v1/xorbs/default/abc HTTP/1.1\r\nHost: t\r\n\r\n"));
  response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 405);
  EXPECT_EQ(response->Header("Allow"), "GET, HEAD, POST");
  EXPECT_TRUE(nlohmann::json::parse(response->body).contains("error"));
}

TEST_F(HttpServerTest, HeadUsesGetRouteAndSendsNoBody) {
  Start();
  TestHttpClient client(server_->port());
  ASSERT_TRUE(client.Send("HEAD /v1/xorbs/p/h HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto head = client.ReadResponse(/*head=*/true);
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  ASSERT_TRUE(client.Send(Get("/v1/xorbs/p/h")));
  auto get = client.ReadResponse();
  ASSERT_TRUE(get);
  // The handler saw HEAD, so its JSON differs from GET's by exactly "HEAD" vs "GET".
  EXPECT_EQ(std::stoul(*head->Header("Content-Length")), get->body.size() + 1);
  EXPECT_EQ(nlohmann::json::parse(get->body)["method"], "GET");
}

TEST_F(HttpServerTest, KeepAliveServesManyRequestsOnOneConnection) {
  Start();
  TestHttpClient client(server_->port());
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(client.Send(Get("/v1/xorbs/p/" + std::to_string(i))));
    auto response = client.ReadResponse();
    ASSERT_TRUE(response) << i;
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(nlohmann::json::parse(response->body)["hash"], std::to_string(i));
    EXPECT_FALSE(response->Header("Connection"));
  }
}

TEST_F(HttpServerTest, PipelinedRequestsAreAnsweredInOrder) {
  Start();
  TestHttpClient client(server_->port());
  ASSERT_TRUE(client.Send(Get("/v1/xorbs/p/first") + Get("/small") + Get("/v1/xorbs/p/third")));
  auto first = client.ReadResponse();
  auto second = client.ReadResponse();
  auto third = client.ReadResponse();
  ASSERT_TRUE(first && second && third);
  EXPECT_EQ(nlohmann::json::parse(first->body)["hash"], "first");
  EXPECT_EQ(second->body, R"({"small":true})");
  EXPECT_EQ(nlohmann::json::parse(third->body)["hash"], "third");
}

TEST_F(HttpServerTest, ReadsContentLengthAndChunkedBodies) {
  Start();
  TestHttpClient client(server_->port());
  ASSERT_TRUE(
      client.Send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\n\r\nhello world"));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "hello world");

  ASSERT_TRUE(
      client.Send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
                  "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"));
  response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "hello world");
}

// Bodies of >= 1 MiB are read into buffers reused across requests: each request still sees
// exactly its own bytes, also after a larger one (no stale tail) and across connections.
TEST_F(HttpServerTest, LargeBodiesInReusedBuffersHoldExactlyTheirBytes) {
  Start();
  const std::pair<size_t, char> bodies[] = {
      {3 << 20, 'a'}, {(2 << 20) + 5, 'b'}, {(1 << 20) - 1, 'c'}, {3 << 20, 'd'}};
  for (int connection = 0; connection < 2; ++connection) {
    TestHttpClient client(server_->port());
    for (const auto& [size, fill] : bodies) {
      ASSERT_TRUE(client.Send("POST /count HTTP/1.1\r\nHost: t\r\nContent-Length: " +
                              std::to_string(size) + "\r\n\r\n" + std::string(size, fill)));
      auto response = client.ReadResponse();
      ASSERT_TRUE(response);
      ASSERT_EQ(response->status, 200) << response->body;
      const auto j = nlohmann::json::parse(response->body);
      EXPECT_EQ(j["size"], size);
      EXPECT_EQ(j["odd"], 0) << fill;
    }
  }
}

TEST_F(HttpServerTest, Expect100ContinueGetsAnInterimResponse) {
  Start();
  TestHttpClient client(server_->port());
  ASSERT_TRUE(client.Send(
      "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n"));
  EXPECT_EQ(client.ReadSome(), "HTTP/1.1 100 Continue\r\n\r\n");
  ASSERT_TRUE(client.Send("data"));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "data");
}

TEST_F(HttpServerTest, TooLargeContentLengthIs413BeforeTheBody) {
  Start();
  TestHttpClient client(server_->port());
  ASSERT_TRUE(client.Send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10000000\r\n\r\n"));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 413);
  EXPECT_TRUE(nlohmann::json::parse(response->body).contains("error"));
  EXPECT_EQ(response->Header("Connection"), "close");
  EXPECT_TRUE(client.WaitForClose());
}

TEST_F(HttpServerTest, ChunkedBodyOverTheLimitIs413) {
  Start();
  TestHttpClient client(server_->port());
  std::string chunk(600, 'a');
  ASSERT_TRUE(
      client.Send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
                  "258\r\n" +
                  chunk + "\r\n258\r\n" + chunk + "\r\n0\r\n\r\n"));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 413);
  EXPECT_TRUE(client.WaitForClose());
}

TEST_F(HttpServerTest, OversizedHeadersAre431) {
  Start();
  TestHttpClient client(server_->port());
  ASSERT_TRUE(client.Send(Get("/small", "X-Big: " + std::string(20000, 'b') + "\r\n")));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 431);
  EXPECT_TRUE(client.WaitForClose());
}

TEST_F(HttpServerTest, GarbageIs400AndCloses) {
  Start();
  TestHttpClient client(server_->port());
  ASSERT_TRUE(client.Send(std::string("\x00\x01 nonsense\r\n\r\n", 15)));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 400);
  EXPECT_TRUE(nlohmann::json::parse(response->body).contains("error"));
  EXPECT_TRUE(client.WaitForClose());
}

TEST_F(HttpServerTest, InvalidContentLengthIs400) {
  Start();
  for (const char* value : {"abc", "-1", "1, 2", "99999999999999999999999"}) {
    TestHttpClient client(server_->port());
    ASSERT_TRUE(client.Send(
        "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::string(value) + "\r\n\r\n"));
    auto response = client.ReadResponse();
    ASSERT_TRUE(response) << value;
    EXPECT_EQ(response->status, 400) << value;
    EXPECT_TRUE(client.WaitForClose()) << value;
  }
}

TEST_F(HttpServerTest, SlowTricklingBodyIs408) {
  ServerLimits limits;
  limits.min_body_bytes_per_second = 1024;
  limits.body_grace = milliseconds(1000);
  Start(limits);
  TestHttpClient client(server_->port());
  ASSERT_TRUE(client.Send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 900\r\n\r\n"));
  std::atomic<bool> stop{false};
  std::thread trickler([&] {
    while (!stop.load()) {
      if (!client.Send("0123456789")) return;  // ~100 B/s
      std::this_thread::sleep_for(milliseconds(100));
    }
  });
  auto start = Clock::now();
  auto response = client.ReadResponse(false, milliseconds(5000));
  auto elapsed = Clock::now() - start;
  stop = true;
  trickler.join();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 408);
  EXPECT_GE(elapsed, milliseconds(900));
  EXPECT_LT(elapsed, milliseconds(3000));
}

TEST_F(HttpServerTest, BodyAtPaceIsAccepted) {
  ServerLimits limits;
  limits.min_body_bytes_per_second = 100;
  limits.body_grace = milliseconds(200);
  Start(limits);
  TestHttpClient client(server_->port());
  ASSERT_TRUE(client.Send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 200\r\n\r\n"));
  for (int i = 0; i < 5; ++i) {  // 40 bytes every 100 ms: 400 B/s, above the pace
    ASSERT_TRUE(client.Send(std::string(40, 'z')));
    std::this_thread::sleep_for(milliseconds(100));
  }
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, std::string(200, 'z'));
}

TEST_F(HttpServerTest, HeaderTimeoutIs408) {
  ServerLimits limits;
  limits.header_timeout = milliseconds(700);
  Start(limits);
  TestHttpClient client(server_->port());
  ASSERT_TRUE(client.Send("GET /small HTTP/1.1\r\nHost: t\r\n"));  // headers never end
  auto start = Clock::now();
  auto response = client.ReadResponse(false, milliseconds(4000));
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 408);
  EXPECT_LT(Clock::now() - start, milliseconds(3000));
  EXPECT_TRUE(client.WaitForClose());
}

TEST_F(HttpServerTest, IdleKeepAliveConnectionIsClosedSilently) {
  ServerLimits limits;
  limits.idle_timeout = milliseconds(300);
  Start(limits);
  TestHttpClient client(server_->port());
  ASSERT_TRUE(client.Send(Get("/small")));
  ASSERT_TRUE(client.ReadResponse());
  auto start = Clock::now();
  EXPECT_TRUE(client.WaitForClose(milliseconds(3000)));
  EXPECT_GE(Clock::now() - start, milliseconds(200));
}

TEST_F(HttpServerTest, ConnectionsOverTheLimitGet503) {
  ServerLimits limits;
  limits.max_connections = 2;
  Start(limits);
  TestHttpClient a(server_->port());
  TestHttpClient b(server_->port());
  // Both mid-request (an idle connection would be shed to make room instead).
  for (TestHttpClient* c : {&a, &b}) {
    ASSERT_TRUE(c->Send("POST /count HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nx"));
  }
  std::this_thread::sleep_for(milliseconds(100));
  TestHttpClient c(server_->port());
  ASSERT_TRUE(c.connected());
  auto rejected = c.ReadResponse();
  ASSERT_TRUE(rejected);
  EXPECT_EQ(rejected->status, 503);
  EXPECT_TRUE(c.WaitForClose());

  // Once a slot frees up, new connections are served again.
  a.Close();
  bool served = false;
  for (int i = 0; i < 50 && !served; ++i) {
    TestHttpClient d(server_->port());
    if (d.Send(Get("/small"))) {
      auto response = d.ReadResponse();
      served = response && response->status == 200;
    }
    if (!served) std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_TRUE(served);
}

TEST_F(HttpServerTest, CompressesLargeJsonWithGzipAndZstd) {
  Start();
  const std::string expected = BigJson();
  ASSERT_GT(expected.size(), 2048u);
  TestHttpClient client(server_->port());

  ASSERT_TRUE(client.Send(Get("/big", "Accept-Encoding: gzip, deflate\r\n")));
  auto gzip = client.ReadResponse();
  ASSERT_TRUE(gzip);
  EXPECT_EQ(gzip->Header("Content-Encoding"), "gzip");
  EXPECT_EQ(gzip->Header("Vary"), "Accept-Encoding");
  EXPECT_LT(gzip->body.size(), expected.size() / 2);
  EXPECT_EQ(GzipDecompress(gzip->body), expected);

  ASSERT_TRUE(client.Send(Get("/big", "Accept-Encoding: gzip, zstd\r\n")));
  auto zstd = client.ReadResponse();
  ASSERT_TRUE(zstd);
  EXPECT_EQ(zstd->Header("Content-Encoding"), "zstd");
  EXPECT_EQ(ZstdDecompress(zstd->body), expected);

  ASSERT_TRUE(client.Send(Get("/big")));
  auto plain = client.ReadResponse();
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->Header("Content-Encoding"));
  EXPECT_EQ(plain->body, expected);

  ASSERT_TRUE(client.Send(Get("/small", "Accept-Encoding: gzip\r\n")));
  auto small = client.ReadResponse();
  ASSERT_TRUE(small);
  EXPECT_FALSE(small->Header("Content-Encoding"));
  EXPECT_EQ(small->body, R"({"small":true})");
}

TEST_F(HttpServerTest, StreamedResponseIsChunked) {
  Start();
  TestHttpClient client(server_->port());
  ASSERT_TRUE(client.Send(Get("/stream", "Accept-Encoding: gzip\r\n")));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_TRUE(response->chunked);
  EXPECT_FALSE(response->Header("Content-Encoding"));
  EXPECT_EQ(response->body, "piece-0\npiece-1\npiece-2\npiece-3\npiece-4\n");
  // The connection stays usable after the last chunk.
  ASSERT_TRUE(client.Send(Get("/small")));
  auto next = client.ReadResponse();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->status, 200);
}

TEST_F(HttpServerTest, SharedBodyIsSentWholeUnderItsLength) {
  Start();
  TestHttpClient client(server_->port());
  for (int i = 0; i < 2; ++i) {  // the pieces are not consumed by the first answer
    ASSERT_TRUE(client.Send(Get("/shared", "Accept-Encoding: gzip\r\n")));
    auto response = client.ReadResponse();
    ASSERT_TRUE(response) << i;
    EXPECT_EQ(response->status, 200);
    EXPECT_FALSE(response->chunked);
    EXPECT_FALSE(response->Header("Content-Encoding"));  // shared bodies go out as they are
    EXPECT_EQ(response->Header("Content-Length"), "300010");
    EXPECT_EQ(response->body, std::string(300000, 'x') + "{\"tail\":1}");
  }
  ASSERT_TRUE(client.Send("HEAD /shared HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto head = client.ReadResponse(/*head=*/true);
  ASSERT_TRUE(head);
  EXPECT_EQ(head->Header("Content-Length"), "300010");
  ASSERT_TRUE(client.Send(Get("/small")));  // still in step after the HEAD
  auto next = client.ReadResponse();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->body, R"({"small":true})");
}

// What /sized/N/M writes, computed independently: pieces of 7 bytes, each a letter chosen by
// its offset.
std::string SizedBody(size_t n) {
  std::string out;
  for (size_t at = 0; at < n; at += 7) {
    out += std::string(std::min<size_t>(7, n - at), static_cast<char>('a' + at % 26));
  }
  return out;
}

// Every byte the server sends until it closes the connection (gives up after 5 s).
std::string ReadUntilClose(TestHttpClient& client) {
  std::string out;
  for (std::string piece; !(piece = client.ReadSome()).empty();) out += piece;
  return out;
}

TEST_F(HttpServerTest, RangeBodyIsSentWholeUnderItsLength) {
  Start();
  const std::string expected =
      "<head>" + FileBytes(0, kFileBytes) + "|mid|" + FileBytes(100, 1000) + "<end>";
  for (const std::string path : {"/file", "/memory"}) {
    SCOPED_TRACE(path);
    TestHttpClient client(server_->port());
    for (int i = 0; i < 2; ++i) {  // the connection stays usable after a range body
      ASSERT_TRUE(client.Send(Get(path, "Accept-Encoding: gzip\r\n")));
      auto response = client.ReadResponse();
      ASSERT_TRUE(response) << i;
      EXPECT_EQ(response->status, 206);
      EXPECT_FALSE(response->chunked);
      EXPECT_FALSE(response->Header("Content-Encoding"));
      EXPECT_EQ(response->Header("Content-Length"), std::to_string(expected.size()));
      EXPECT_TRUE(response->body == expected)
          << "body of " << response->body.size() << " bytes differs";
    }
    ASSERT_TRUE(client.Send("HEAD " + path + " HTTP/1.1\r\nHost: t\r\n\r\n"));
    auto head = client.ReadResponse(/*head=*/true);
    ASSERT_TRUE(head);
    EXPECT_EQ(head->Header("Content-Length"), std::to_string(expected.size()));
    ASSERT_TRUE(client.Send(Get("/small")));  // still in step after the HEAD
    auto next = client.ReadResponse();
    ASSERT_TRUE(next);
    EXPECT_EQ(next->body, R"({"small":true})");
  }
}

TEST_F(HttpServerTest, FileBodyShorterThanItsRangeIsCutOffAndTheConnectionClosed) {
  Start();
  TestHttpClient client(server_->port());
  ASSERT_TRUE(client.Send(Get("/file-short")));
  auto head = client.ReadHead();
  ASSERT_TRUE(head);
  EXPECT_EQ(head->Header("Content-Length"), std::to_string(6 + 1010 + 5));
  // Everything the file has, then the close: the client can tell the body is short.
  EXPECT_EQ(ReadUntilClose(client), "<head>" + FileBytes(kFileBytes - 1000, 1000));
  // The server is fine: a new connection is answered.
  TestHttpClient other(server_->port());
  ASSERT_TRUE(other.Send(Get("/small")));
  auto next = other.ReadResponse();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->status, 200);
  bool logged = false;
  for (int i = 0; i < 100 && !logged; ++i) {
    for (const std::string& line : Log()) logged |= line.find("file ended") != std::string::npos;
    if (!logged) std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_TRUE(logged) << "the access log names the short file";
}

TEST_F(HttpServerTest, RangeBodyToAClientThatStopsReadingTimesOut) {
  ServerLimits limits;
  limits.write_timeout = milliseconds(300);
  Start(limits);
  for (const std::string path : {"/file-big", "/memory-big"}) {
    SCOPED_TRACE(path);
    TestHttpClient client(server_->port());
    ASSERT_TRUE(client.Send(Get(path)));
    auto head = client.ReadHead();
    ASSERT_TRUE(head);
    EXPECT_EQ(head->Header("Content-Length"), std::to_string(12 * kFileBytes));
    std::this_thread::sleep_for(milliseconds(1500));  // read nothing: the server gives up
    const std::string got = ReadUntilClose(client);
    EXPECT_LT(got.size(), 12 * kFileBytes);
    const std::string file = FileBytes(0, kFileBytes);
    for (uint64_t at = 0; at < got.size(); at += kFileBytes) {
      const uint64_t n = std::min<uint64_t>(kFileBytes, got.size() - at);
      ASSERT_TRUE(got.compare(at, n, file, 0, n) == 0) << "bytes from " << at << " differ";
    }
  }
}

TEST_F(HttpServerTest, RangeBodyClientDisconnectingMidBodyLeavesTheServerServing) {
  Start();
  // Each close with unread data resets the connection, so the server's next sendfile(2) or
  // write fails with EPIPE (sendfile also raises SIGPIPE, which must not end this process).
  for (const std::string source : {"/file", "/memory"}) {
    SCOPED_TRACE(source);
    for (int i = 0; i < 5; ++i) {
      TestHttpClient client(server_->port());
      ASSERT_TRUE(client.Send(Get(source + "-big")));
      ASSERT_TRUE(client.ReadHead());
      EXPECT_FALSE(client.ReadSome().empty());
    }  // gone mid-body
    TestHttpClient other(server_->port());
    ASSERT_TRUE(other.Send(Get(source)));
    auto response = other.ReadResponse();
    ASSERT_TRUE(response);
    EXPECT_EQ(response->body.size(), 6 + kFileBytes + 5 + 1000 + 5);
  }
}

TEST_F(HttpServerTest, MemoryRangeBodyRangeOutsideItsMemoryIsCutOffAndTheConnectionClosed) {
  Start();
  TestHttpClient client(server_->port());
  ASSERT_TRUE(client.Send(Get("/memory-short")));
  auto head = client.ReadHead();
  ASSERT_TRUE(head);
  EXPECT_EQ(head->Header("Content-Length"), std::to_string(6 + 1010 + 5));
  // No byte of a range that is not all there: the text before it, then the close.
  EXPECT_EQ(ReadUntilClose(client), "<head>");
  bool logged = false;
  for (int i = 0; i < 100 && !logged; ++i) {
    for (const std::string& line : Log())
      logged |= line.find("outside its memory") != std::string::npos;
    if (!logged) std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_TRUE(logged) << "the access log names the bad range";
}

// The write timeout is for progress, not for the whole range: a 24 MiB range read at
// ~25 MiB/s takes about a second, twice the timeout, and still arrives whole.
TEST_F(HttpServerTest, MemoryRangeBodyToASlowButSteadyReaderIsSentWhole) {
  ServerLimits limits;
  limits.write_timeout = milliseconds(500);
  Start(limits);
  TestHttpClient client(server_->port());
  ASSERT_TRUE(client.Send(Get("/memory-slow")));
  auto head = client.ReadHead();
  ASSERT_TRUE(head);
  EXPECT_EQ(head->Header("Content-Length"), std::to_string(kSlowBodyBytes));
  std::string got;
  const auto start = std::chrono::steady_clock::now();
  while (got.size() < kSlowBodyBytes) {
    const size_t target = std::min<size_t>(got.size() + (1 << 20), kSlowBodyBytes);
    while (got.size() < target) {
      const std::string piece = client.ReadSome();
      ASSERT_FALSE(piece.empty()) << "closed after " << got.size() << " bytes";
      got += piece;
    }
    std::this_thread::sleep_for(milliseconds(40));
  }
  EXPECT_GT(std::chrono::steady_clock::now() - start, limits.write_timeout);
  EXPECT_TRUE(got == FileBytes(0, kSlowBodyBytes)) << "the body differs";
}

TEST_F(HttpServerTest, StreamWithContentLengthIsUnframedAndKeepsTheConnection) {
  Start();
  TestHttpClient client(server_->port());
  ASSERT_TRUE(client.Send(Get("/sized/100/100")));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 206);
  EXPECT_FALSE(response->chunked);
  EXPECT_EQ(response->Header("Content-Length"), "100");
  EXPECT_EQ(response->body, SizedBody(100));
  EXPECT_EQ(sized_.get_future().get(), std::make_pair(100, true));
  // The connection stays usable.
  ASSERT_TRUE(client.Send(Get("/small")));
  auto next = client.ReadResponse();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->body, R"({"small":true})");
  // HEAD announces the length and sends nothing.
  ASSERT_TRUE(client.Send("HEAD /sized/42/42 HTTP/1.1\r\nHost: test\r\n\r\n"));
  auto head = client.ReadResponse(/*head=*/true);
  ASSERT_TRUE(head);
  EXPECT_EQ(head->Header("Content-Length"), "42");
  EXPECT_TRUE(head->body.empty());
}

TEST_F(HttpServerTest, StreamShorterThanItsContentLengthClosesTheConnection) {
  Start();
  TestHttpClient client(server_->port());
  ASSERT_TRUE(client.Send(Get("/sized/100/30")));
  auto head = client.ReadHead();
  ASSERT_TRUE(head);
  EXPECT_EQ(head->Header("Content-Length"), "100");
  EXPECT_FALSE(head->chunked);
  EXPECT_EQ(sized_.get_future().get(), std::make_pair(30, true));
  // 30 bytes, then the close: the client learns the body is truncated.
  EXPECT_EQ(ReadUntilClose(client), SizedBody(30));
}

TEST_F(HttpServerTest, StreamLongerThanItsContentLengthIsCutOff) {
  Start();
  TestHttpClient client(server_->port());
  ASSERT_TRUE(client.Send(Get("/sized/10/30")));
  auto head = client.ReadHead();
  ASSERT_TRUE(head);
  EXPECT_EQ(head->Header("Content-Length"), "10");
  // The second 7-byte piece would overflow the 10 declared bytes: refused, then the close.
  EXPECT_EQ(sized_.get_future().get(), std::make_pair(7, false));
  EXPECT_EQ(ReadUntilClose(client), SizedBody(7));
}

TEST_F(HttpServerTest, StreamProducerSeesFalseWhenClientDisconnects) {
  Start();
  auto result = endless_.get_future();
  {
    TestHttpClient client(server_->port());
    ASSERT_TRUE(client.Send(Get("/endless")));
    auto head = client.ReadHead();
    ASSERT_TRUE(head);
    EXPECT_TRUE(head->chunked);
    EXPECT_FALSE(client.ReadSome().empty());
  }  // disconnect mid-stream
  ASSERT_EQ(result.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto [written, ok] = result.get();
  EXPECT_FALSE(ok);
  EXPECT_LT(written, 100000);
}

TEST_F(HttpServerTest, GracefulStopFinishesInFlightRequests) {
  Start();
  TestHttpClient idle(server_->port());
  ASSERT_TRUE(idle.Send(Get("/small")));
  ASSERT_TRUE(idle.ReadResponse());

  TestHttpClient busy(server_->port());
  auto started = slow_started_.get_future();
  ASSERT_TRUE(busy.Send(Get("/slow")));
  ASSERT_EQ(started.wait_for(std::chrono::seconds(5)), std::future_status::ready);

  auto stop_start = Clock::now();
  std::thread stopper([&] { server_->Stop(); });
  // New connections are refused once Stop has begun.
  bool refused = false;
  for (int i = 0; i < 100 && !refused; ++i) {
    TestHttpClient late(server_->port());
    refused = !late.connected();
    if (!refused) std::this_thread::sleep_for(milliseconds(5));
  }
  EXPECT_TRUE(refused);
  // The idle keep-alive connection is closed...
  EXPECT_TRUE(idle.WaitForClose(milliseconds(2000)));
  // ...while the slow request still gets its whole response.
  auto response = busy.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, R"({"slow":"done"})");
  EXPECT_EQ(response->Header("Connection"), "close");
  busy.Close();
  stopper.join();
  EXPECT_LT(Clock::now() - stop_start, std::chrono::seconds(5));
}

TEST_F(HttpServerTest, HealthzAndMetrics) {
  Start();
  TestHttpClient client(server_->port());
  ASSERT_TRUE(client.Send(Get("/healthz")));
  auto health = client.ReadResponse();
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(nlohmann::json::parse(health->body), nlohmann::json({{"status", "ok"}}));

  server_->metrics().GetCounter("xetstore_dedup_hits_total", "Dedup hits.").Increment(7);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(client.Send(Get("/v1/xorbs/p/h")));
    ASSERT_TRUE(client.ReadResponse());
  }
  ASSERT_TRUE(client.Send(Get("/missing")));
  ASSERT_TRUE(client.ReadResponse());
  ASSERT_TRUE(client.Send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello"));
  ASSERT_TRUE(client.ReadResponse());

  ASSERT_TRUE(client.Send(Get("/metrics")));
  auto metrics = client.ReadResponse();
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_NE(metrics->Header("Content-Type")->find("text/plain"), std::string::npos);
  const std::string& text = metrics->body;
  EXPECT_NE(text.find("xetstore_http_requests_total{code=\"2xx\",route=\"healthz\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("xetstore_http_requests_total{code=\"2xx\",route=\"/v1/xorbs/{prefix}/"
                      "{hash}\"} 3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("xetstore_http_requests_total{code=\"4xx\",route=\"unmatched\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("xetstore_http_request_duration_seconds_count{code=\"2xx\",route="
                      "\"/v1/xorbs/{prefix}/{hash}\"} 3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("xetstore_http_request_duration_seconds_bucket{code=\"2xx\",route="
                      "\"healthz\",le=\"+Inf\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("xetstore_http_request_body_bytes_total{route=\"echo\"} 5\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("xetstore_http_response_bytes_total{route=\"healthz\"} "), std::string::npos);
  EXPECT_NE(text.find("xetstore_http_open_connections 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("xetstore_dedup_hits_total 7\n"), std::string::npos) << text;
}

TEST_F(HttpServerTest, HandlerExceptionIs500AndConnectionStaysUsable) {
  Start();
  TestHttpClient client(server_->port());
  ASSERT_TRUE(client.Send(Get("/throw")));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 500);
  EXPECT_EQ(nlohmann::json::parse(response->body)["error"], "internal server error");
  ASSERT_TRUE(client.Send(Get("/small")));
  auto next = client.ReadResponse();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->status, 200);
  // The access log records why.
  bool logged = false;
  for (const std::string& line : Log()) {
    logged |= line.find("handler threw: boom") != std::string::npos;
  }
  EXPECT_TRUE(logged);
}

TEST_F(HttpServerTest, AccessLogHasOneJsonLinePerRequest) {
  Start();
  TestHttpClient client(server_->port());
  ASSERT_TRUE(client.Send("POST /echo?q=1 HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc"));
  ASSERT_TRUE(client.ReadResponse());
  ASSERT_TRUE(client.Send(Get("/small")));  // the first line is logged before this is read
  ASSERT_TRUE(client.ReadResponse());
  std::vector<std::string> log = Log();
  ASSERT_GE(log.size(), 1u);
  auto line = nlohmann::json::parse(log[0]);
  EXPECT_EQ(line["method"], "POST");
  EXPECT_EQ(line["path"], "/echo?q=1");
  EXPECT_EQ(line["route"], "echo");
  EXPECT_EQ(line["status"], 200);
  EXPECT_EQ(line["bytes_in"], 3);
  EXPECT_GT(line["bytes_out"].get<int>(), 3);
  EXPECT_GE(line["duration_ms"].get<double>(), 0.0);
  EXPECT_EQ(line["remote"].get<std::string>().rfind("127.0.0.1:", 0), 0u);
  EXPECT_TRUE(line.contains("ts"));
}

TEST(HttpServerStartTest, ReportsBindErrors) {
  ServerOptions options;
  options.address = "not-an-address";
  options.port = 0;
  auto bad = HttpServer::Start(Router(), options);
  EXPECT_FALSE(bad.ok());

  options.address = "127.0.0.1";
  options.access_log = nullptr;
  auto first = HttpServer::Start(Router(), options);
  ASSERT_TRUE(first.ok());
  options.port = (*first)->port();
  auto second = HttpServer::Start(Router(), options);
  EXPECT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Status::Code::kIoError);
}

TEST(HttpShutdownSignalsTest, WaitReturnsTheSignal) {
  std::promise<void> ready;
  std::promise<int> received;
  std::thread waiter([&] {
    ShutdownSignals signals;
    ready.set_value();
    received.set_value(signals.Wait());
  });
  ready.get_future().wait();
  pthread_kill(waiter.native_handle(), SIGTERM);
  auto result = received.get_future();
  ASSERT_EQ(result.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_EQ(result.get(), SIGTERM);
  waiter.join();

  ShutdownSignals signals;
  EXPECT_FALSE(signals.WaitFor(milliseconds(10)));
}

}  // namespace
}  // namespace xet
