// The client transport (HttpClient, CasClient, token sources) end to end: against a real
// `xetstore serve` for the CAS API, and against a scripted server for what a real server
// rarely does (5xx bursts, cut connections, reordered or broken multipart answers).
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "client/cas/cas_client.h"
#include "client/hub/hub_client.h"
#include "client/transport/http_client.h"
#include "format/compression.h"
#include "format/xorb.h"
#include "support/scripted_http_server.h"
#include "support/server_process.h"
#include "support/subprocess.h"
#include "support/test_support.h"
#include "support/xet_fixtures.h"

namespace xet {
namespace {

using testing::ScriptedHttpServer;
using testing::ScriptedRequest;
using testing::ServerProcess;
using testing::UploadArtifacts;

// A policy that retries quickly, for tests.
HttpClientOptions FastRetries(int attempts, std::atomic<int>* retries = nullptr) {
  HttpClientOptions o;
  o.retry.max_attempts = attempts;
  o.retry.base_delay = std::chrono::milliseconds(1);
  o.retry.max_delay = std::chrono::milliseconds(5);
  o.connect_timeout_ms = 2000;
  if (retries != nullptr) o.on_retry = [retries](const Status&) { ++*retries; };
  return o;
}

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// The chunks of one fetched range, decompressed.
std::vector<std::string> DecodeChunks(std::span<const uint8_t> bytes, uint32_t count) {
  std::vector<std::string> out;
  ChunkCodec codec;
  for (uint32_t i = 0; i < count; ++i) {
    std::vector<uint8_t> chunk;
    auto n = ExtractXorbChunk(bytes, codec, &chunk);
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    if (!n.ok()) return out;
    out.emplace_back(chunk.begin(), chunk.end());
    bytes = bytes.subspan(*n);
  }
  EXPECT_TRUE(bytes.empty());
  return out;
}

enum class FetchMode { kWholeEntry, kEachRange, kPairs };

// Rebuilds the bytes a reconstruction describes, fetching through CasClient::FetchRanges.
std::string Rebuild(CasClient& cas, const Reconstruction& recon, uint64_t want, FetchMode mode) {
  std::map<std::pair<Hash, uint32_t>, std::string> chunks;
  size_t deliveries = 0;
  for (const auto& [xorb, entries] : recon.xorbs) {
    for (const FetchEntry& e : entries) {
      auto on_range = [&, xorb = xorb](size_t i, std::span<const uint8_t> b) -> Status {
        ++deliveries;
        const FetchRange& r = e.ranges[i];
        EXPECT_EQ(b.size(), r.byte_end - r.byte_start + 1);
        auto decoded = DecodeChunks(b, r.chunk_end - r.chunk_start);
        for (uint32_t k = 0; k < decoded.size(); ++k)
          chunks[{xorb, r.chunk_start + k}] = decoded[k];
        return Status::Ok();
      };
      const size_t n = e.ranges.size();
      switch (mode) {
        case FetchMode::kWholeEntry: {
          Status st = cas.FetchRanges(e, 0, n - 1, on_range);
          EXPECT_TRUE(st.ok()) << st.ToString();
          break;
        }
        case FetchMode::kEachRange:
          for (size_t i = 0; i < n; ++i) {
            Status st = cas.FetchRanges(e, i, i, on_range);
            EXPECT_TRUE(st.ok()) << st.ToString();
          }
          break;
        case FetchMode::kPairs:
          for (size_t i = 0; i < n; i += 2) {
            Status st = cas.FetchRanges(e, i, std::min(i + 1, n - 1), on_range);
            EXPECT_TRUE(st.ok()) << st.ToString();
          }
          break;
      }
    }
  }
  size_t total_ranges = 0;
  for (const auto& [xorb, entries] : recon.xorbs) {
    for (const FetchEntry& e : entries) total_ranges += e.ranges.size();
  }
  EXPECT_EQ(deliveries, total_ranges);
  std::string out;
  for (const ReconTerm& t : recon.terms) {
    std::string term;
    for (uint32_t i = t.chunk_start; i < t.chunk_end; ++i) term += chunks[{t.xorb_hash, i}];
    EXPECT_EQ(term.size(), t.unpacked_length);
    out += term;
  }
  out.erase(0, recon.offset_into_first_range);
  if (out.size() > want) out.resize(want);
  return out;
}

class ClientTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(testing::MakeTempDir("client"));
    writer_ = server_->CreateToken("write", "team/a");
    other_ = server_->CreateToken("write", "team/b");
  }

  // A user token used directly against the CAS (the bucket token endpoints mint CAS
  // tokens; a user token is accepted by the CAS routes as well).
  std::unique_ptr<CasTokenSource> Static(const std::string& token) {
    return MakeStaticTokenSource(XetToken{token, server_->url() + "/", 0});
  }

  void UploadAll(CasClient& cas, const UploadArtifacts& a) {
    for (const SerializedXorb& x : a.xorbs) {
      auto inserted = cas.UploadXorb(x.hash, x.bytes);
      ASSERT_TRUE(inserted.ok()) << inserted.status().ToString();
      EXPECT_TRUE(*inserted);
    }
    auto registered = cas.UploadShard(Bytes(a.shard_bytes));
    ASSERT_TRUE(registered.ok()) << registered.status().ToString();
    EXPECT_TRUE(*registered);
  }

  std::unique_ptr<ServerProcess> server_;
  std::string writer_, other_;
};

TEST_F(ClientTransportTest, UploadThenFetchEveryWay) {
  HttpClient http;
  auto tokens = Static(writer_);
  CasClient cas(http, *tokens);

  std::vector<uint8_t> base_data, data;
  const UploadArtifacts base = testing::PrepareInterleavedUpload(64, 3000, 11, &base_data);
  UploadAll(cas, base);
  // A file of every third chunk: several ranges per xorb, so multi-range fetches.
  const UploadArtifacts a = testing::PrepareSparseFile(base, base_data, 3, &data);
  auto sparse = cas.UploadShard(Bytes(a.shard_bytes));
  ASSERT_TRUE(sparse.ok()) << sparse.status().ToString();
  EXPECT_TRUE(*sparse);
  // Idempotent by content address.
  for (const SerializedXorb& x : a.xorbs) {
    auto again = cas.UploadXorb(x.hash, x.bytes);
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_FALSE(*again);
  }
  auto again = cas.UploadShard(Bytes(a.shard_bytes));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(*again);

  auto recon = cas.GetReconstruction(a.file_hash, std::nullopt);
  ASSERT_TRUE(recon.ok()) << recon.status().ToString();
  EXPECT_EQ(recon->terms.size(), 22u);
  ASSERT_EQ(recon->xorbs.size(), 2u);
  size_t multi = 0;
  for (const auto& [x, entries] : recon->xorbs) {
    for (const FetchEntry& e : entries) multi += e.ranges.size() > 1;
  }
  EXPECT_GT(multi, 0u) << "the interleaved file should need multi-range fetches";
  const std::string want = testing::AsString(data);
  EXPECT_EQ(Rebuild(cas, *recon, data.size(), FetchMode::kWholeEntry), want);
  EXPECT_EQ(Rebuild(cas, *recon, data.size(), FetchMode::kEachRange), want);
  EXPECT_EQ(Rebuild(cas, *recon, data.size(), FetchMode::kPairs), want);

  // A byte range starting and ending mid-chunk.
  const uint64_t first = 4500, last = 4500 + 40'000;
  auto part = cas.GetReconstruction(a.file_hash, std::make_pair(first, last));
  ASSERT_TRUE(part.ok()) << part.status().ToString();
  EXPECT_EQ(part->offset_into_first_range, 1500u);
  EXPECT_EQ(Rebuild(cas, *part, last - first + 1, FetchMode::kWholeEntry),
            want.substr(first, last - first + 1));

  // Past the end: OutOfRange; an unknown file: NotFound; another scope: NotFound.
  auto past = cas.GetReconstruction(
      a.file_hash, std::make_pair<uint64_t, uint64_t>(data.size(), data.size() + 5));
  EXPECT_EQ(past.status().code(), Status::Code::kOutOfRange) << past.status().ToString();
  Hash unknown = a.file_hash;
  unknown.mutable_data()[0] ^= 1;
  EXPECT_EQ(cas.GetReconstruction(unknown, std::nullopt).status().code(), Status::Code::kNotFound);
  auto other_tokens = Static(other_);
  CasClient other(http, *other_tokens);
  EXPECT_EQ(other.GetReconstruction(a.file_hash, std::nullopt).status().code(),
            Status::Code::kNotFound);
}

TEST_F(ClientTransportTest, OneClientServesManyThreads) {
  HttpClient http;
  auto tokens = Static(writer_);
  CasClient cas(http, *tokens);
  std::vector<uint8_t> base_data, data;
  const UploadArtifacts base = testing::PrepareInterleavedUpload(40, 2000, 21, &base_data);
  UploadAll(cas, base);
  const UploadArtifacts a = testing::PrepareSparseFile(base, base_data, 2, &data);
  ASSERT_TRUE(cas.UploadShard(Bytes(a.shard_bytes)).ok());
  const std::string want = testing::AsString(data);
  std::atomic<int> good = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        auto recon = cas.GetReconstruction(a.file_hash, std::nullopt);
        if (!recon.ok()) continue;
        const FetchMode mode = (t + i) % 2 == 0 ? FetchMode::kWholeEntry : FetchMode::kEachRange;
        if (Rebuild(cas, *recon, data.size(), mode) == want) ++good;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(good.load(), 40);
}

TEST_F(ClientTransportTest, CompressedTextFileAndDedupQuery) {
  HttpClient http;
  auto tokens = Static(writer_);
  CasClient cas(http, *tokens);
  const auto data = testing::TextLikeBytes(3'000'000, 5);
  const UploadArtifacts a = testing::PrepareUpload(data);
  UploadAll(cas, a);
  auto recon = cas.GetReconstruction(a.file_hash, std::nullopt);
  ASSERT_TRUE(recon.ok()) << recon.status().ToString();
  EXPECT_EQ(Rebuild(cas, *recon, data.size(), FetchMode::kWholeEntry), testing::AsString(data));

  // The first chunk of a file is eligible for global dedup: the answer is a shard.
  auto shard = cas.QueryChunk(a.chunks[0].hash);
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  ASSERT_TRUE(shard->has_value());
  EXPECT_GT((*shard)->size(), 48u);
  Hash unknown = a.chunks[0].hash;
  unknown.mutable_data()[5] ^= 0x40;
  auto miss = cas.QueryChunk(unknown);
  ASSERT_TRUE(miss.ok()) << miss.status().ToString();
  EXPECT_FALSE(miss->has_value());
}

TEST_F(ClientTransportTest, SignedUrlsAreCheckedAndNeedNoToken) {
  HttpClient http;
  auto tokens = Static(writer_);
  CasClient cas(http, *tokens);
  std::vector<uint8_t> data;
  const UploadArtifacts a = testing::PrepareInterleavedUpload(8, 1000, 3, &data);
  UploadAll(cas, a);
  auto recon = cas.GetReconstruction(a.file_hash, std::nullopt);
  ASSERT_TRUE(recon.ok()) << recon.status().ToString();
  FetchEntry entry = recon->xorbs[0].second[0];
  // Even a client whose token source fails can fetch signed URLs.
  auto broken = MakeCachingTokenSource(
      []() -> Result<XetToken> { return Status::Unauthenticated("no token for you"); });
  CasClient tokenless(http, *broken);
  auto count = [](size_t, std::span<const uint8_t>) { return Status::Ok(); };
  EXPECT_TRUE(tokenless.FetchRanges(entry, 0, entry.ranges.size() - 1, count).ok());
  // A range outside the signed set, or a tampered signature: PermissionDenied.
  FetchEntry widened = entry;
  widened.ranges[0].byte_end += 1;
  EXPECT_EQ(cas.FetchRanges(widened, 0, 0, count).code(), Status::Code::kPermissionDenied);
  FetchEntry tampered = entry;
  tampered.url.back() = tampered.url.back() == '0' ? '1' : '0';  // still 64 hex digits
  EXPECT_EQ(cas.FetchRanges(tampered, 0, 0, count).code(), Status::Code::kPermissionDenied);
  // Bad indices never reach the network.
  EXPECT_EQ(cas.FetchRanges(entry, 1, 0, count).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(cas.FetchRanges(entry, 0, entry.ranges.size(), count).code(),
            Status::Code::kInvalidArgument);
  // An on_range error is returned as is and stops the transfer.
  size_t calls = 0;
  const Status stop =
      cas.FetchRanges(entry, 0, entry.ranges.size() - 1, [&](size_t, std::span<const uint8_t>) {
        ++calls;
        return Status::IoError("disk full");
      });
  EXPECT_EQ(stop.code(), Status::Code::kIoError);
  EXPECT_EQ(stop.message(), "disk full");
  EXPECT_EQ(calls, 1u);
}

TEST_F(ClientTransportTest, UnauthorizedRefreshesTheTokenOnce) {
  HttpClient http;
  int fetches = 0;
  auto tokens = MakeCachingTokenSource([&]() -> Result<XetToken> {
    ++fetches;
    // The first token is stale (the server answers 401), the next one works.
    const std::string t = fetches == 1 ? "hf_" + std::string(40, '0') : writer_;
    return XetToken{t, server_->url(), INT64_MAX};
  });
  CasClient cas(http, *tokens);
  const UploadArtifacts a = testing::PrepareUpload(testing::RandomBytes(100'000, 9));
  auto inserted = cas.UploadXorb(a.xorbs[0].hash, a.xorbs[0].bytes);
  ASSERT_TRUE(inserted.ok()) << inserted.status().ToString();
  EXPECT_EQ(fetches, 2);
  // The fresh token is cached.
  ASSERT_TRUE(cas.UploadShard(Bytes(a.shard_bytes)).ok());
  EXPECT_EQ(fetches, 2);

  // A token that stays bad: one refresh, then Unauthenticated.
  int bad_fetches = 0;
  auto bad = MakeCachingTokenSource([&]() -> Result<XetToken> {
    ++bad_fetches;
    return XetToken{"hf_" + std::string(40, '1'), server_->url(), INT64_MAX};
  });
  CasClient denied(http, *bad);
  EXPECT_EQ(denied.GetReconstruction(a.file_hash, std::nullopt).status().code(),
            Status::Code::kUnauthenticated);
  EXPECT_EQ(bad_fetches, 2);
}

TEST_F(ClientTransportTest, ClientErrorsAreNeverRetried) {
  std::atomic<int> retries = 0;
  HttpClient http(FastRetries(5, &retries));
  auto tokens = Static(writer_);
  CasClient cas(http, *tokens);
  const UploadArtifacts a = testing::PrepareUpload(testing::RandomBytes(50'000, 4));
  // The body does not match the hash: 400, once.
  std::vector<uint8_t> garbage = a.xorbs[0].bytes;
  garbage[garbage.size() / 2] ^= 0xFF;
  auto r = cas.UploadXorb(a.xorbs[0].hash, garbage);
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument) << r.status().ToString();
  EXPECT_NE(r.status().message().find("(HTTP 400)"), std::string::npos) << r.status().message();
  // A shard referencing xorbs that were never uploaded: 400, once.
  EXPECT_EQ(cas.UploadShard(Bytes(a.shard_bytes)).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(retries.load(), 0);
}

TEST(ClientTransportFaultTest, ServerDownIsUnavailableAfterThePolicysAttempts) {
  std::atomic<int> retries = 0;
  HttpClient http(FastRetries(4, &retries));
  const std::string url =
      "http://127.0.0.1:" + std::to_string(testing::UnusedLoopbackPort()) + "/v1/shards?x=secret";
  auto r = http.Send(ClientRequest{"GET", url, {}, {}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kUnavailable);
  EXPECT_NE(r.status().message().find("gave up after 4 attempts"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("/v1/shards"), std::string::npos);
  EXPECT_EQ(r.status().message().find("secret"), std::string::npos) << "query leaked";
  EXPECT_EQ(retries.load(), 3);

  // Through CasClient and HubClient the same.
  auto tokens = MakeStaticTokenSource(XetToken{"t", url.substr(0, url.find("/v1")), 0});
  CasClient cas(http, *tokens);
  EXPECT_EQ(cas.GetReconstruction(Hash(), std::nullopt).status().code(),
            Status::Code::kUnavailable);
  HubClient hub(http, url.substr(0, url.find("/v1")), "hf_x");
  EXPECT_EQ(hub.GetBucket("ns/b").status().code(), Status::Code::kUnavailable);
  EXPECT_EQ(hub.CreateBucket("ns/../b", true).status().code(), Status::Code::kInvalidArgument);
}

TEST(ClientTransportFaultTest, MalformedUrlsFailFast) {
  std::atomic<int> retries = 0;
  HttpClient http(FastRetries(4, &retries));
  EXPECT_EQ(http.Send(ClientRequest{"GET", "nope://x/y", {}, {}}).status().code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(http.Send(ClientRequest{"GET", "http://h/a\r\nX: y", {}, {}}).status().code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(
      http.Send(ClientRequest{"GET", "http://127.0.0.1:1/", {{"X-A", "b\r\nInjected: 1"}}, {}})
          .status()
          .code(),
      Status::Code::kInvalidArgument);
  EXPECT_EQ(retries.load(), 0);
}

TEST(ClientTransportFaultTest, RetryableStatusesAreRetriedWithTheSameBody) {
  ScriptedHttpServer server({
      [](const ScriptedRequest&) {
        return ScriptedHttpServer::Response(503, R"({"error":"overloaded"})",
                                            {"Content-Type: application/json", "Retry-After: 0"});
      },
      [](const ScriptedRequest&) { return ScriptedHttpServer::Response(502, "bad gateway"); },
      [](const ScriptedRequest& r) { return ScriptedHttpServer::Response(200, "echo:" + r.body); },
  });
  std::vector<std::string> causes;
  HttpClientOptions o = FastRetries(5);
  o.on_retry = [&](const Status& s) { causes.push_back(s.message()); };
  HttpClient http(o);
  const std::string body = "payload";
  auto r = http.Send(ClientRequest{"POST", server.url() + "/x", {}, Bytes(body)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "echo:payload");
  ASSERT_EQ(causes.size(), 2u);
  EXPECT_NE(causes[0].find("overloaded (HTTP 503)"), std::string::npos) << causes[0];
  EXPECT_NE(causes[1].find("bad gateway (HTTP 502)"), std::string::npos) << causes[1];
  const auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u);
  for (const auto& q : reqs) {
    EXPECT_EQ(q.body, "payload");
    EXPECT_EQ(q.Header("Content-Type"), "application/octet-stream");
    EXPECT_EQ(q.Header("Expect"), "");
  }
}

TEST(ClientTransportFaultTest, PersistentRetryableStatusBecomesUnavailable) {
  std::vector<ScriptedHttpServer::Handler> script(
      3, [](const ScriptedRequest&) { return ScriptedHttpServer::Response(504, "{}"); });
  ScriptedHttpServer server(script);
  HttpClient http(FastRetries(3));
  auto r = http.Send(ClientRequest{"GET", server.url() + "/x", {}, {}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kUnavailable);
  EXPECT_NE(r.status().message().find("HTTP 504"), std::string::npos) << r.status().message();
  EXPECT_EQ(server.requests().size(), 3u);
}

TEST(ClientTransportFaultTest, StreamRestartsAfterACutConnection) {
  const std::string full(100'000, 'q');
  ScriptedHttpServer server({
      // Promises the whole body, sends half, closes.
      [&](const ScriptedRequest&) {
        return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(full.size()) + "\r\n\r\n" +
               full.substr(0, full.size() / 2);
      },
      [&](const ScriptedRequest&) { return ScriptedHttpServer::Response(200, full); },
  });
  HttpClient http(FastRetries(3));
  std::string got;
  int restarts = 0, headers = 0;
  HttpClient::StreamCallbacks cb;
  cb.sink = [&](std::string_view b) {
    got.append(b);
    return true;
  };
  cb.on_headers = [&](int status, const HeaderList&) {
    EXPECT_EQ(status, 200);
    ++headers;
  };
  cb.on_restart = [&] {
    ++restarts;
    got.clear();
  };
  auto r = http.Stream(ClientRequest{"GET", server.url() + "/big", {}, {}}, cb);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(got, full);
  EXPECT_EQ(restarts, 1);
  EXPECT_EQ(headers, 2);

  // Without on_restart a partially delivered body is not retried.
  ScriptedHttpServer server2(
      {[&](const ScriptedRequest&) { return "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"; }});
  HttpClient::StreamCallbacks no_restart;
  no_restart.sink = [](std::string_view) { return true; };
  auto r2 = http.Stream(ClientRequest{"GET", server2.url() + "/big", {}, {}}, no_restart);
  EXPECT_EQ(r2.status().code(), Status::Code::kUnavailable) << r2.status().ToString();
  EXPECT_EQ(server2.requests().size(), 1u);

  // A sink that says stop: Cancelled, not retried.
  ScriptedHttpServer server3(
      {[&](const ScriptedRequest&) { return ScriptedHttpServer::Response(200, full); }});
  HttpClient::StreamCallbacks stop;
  stop.sink = [](std::string_view) { return false; };
  EXPECT_EQ(http.Stream(ClientRequest{"GET", server3.url() + "/", {}, {}}, stop).status().code(),
            Status::Code::kCancelled);
}

TEST(ClientTransportFaultTest, OversizedBufferedAnswerIsRefused) {
  ScriptedHttpServer server({[](const ScriptedRequest&) {
    return ScriptedHttpServer::Response(200, std::string(5000, 'x'));
  }});
  HttpClientOptions o = FastRetries(1);
  o.max_response_bytes = 4096;
  HttpClient http(o);
  EXPECT_EQ(http.Send(ClientRequest{"GET", server.url() + "/", {}, {}}).status().code(),
            Status::Code::kResourceExhausted);
}

// A FetchEntry of three ranges and the bytes of a fake xorb object behind it.
struct FakeObject {
  std::string bytes;
  FetchEntry entry;
  FakeObject() {
    for (int i = 0; i < 300; ++i) bytes += static_cast<char>('A' + i % 26);
    entry.url = "/xorb?sig=1";
    entry.ranges = {{0, 1, 10, 19, {}}, {1, 2, 50, 59, {}}, {2, 3, 100, 149, {}}};
  }
  std::string Slice(const FetchRange& r) const {
    return bytes.substr(r.byte_start, r.byte_end - r.byte_start + 1);
  }
  static std::string Part(const std::string& boundary, uint64_t a, uint64_t b,
                          const std::string& data) {
    return "--" + boundary + "\r\nContent-Range: bytes " + std::to_string(a) + "-" +
           std::to_string(b) + "/300\r\n\r\n" + data + "\r\n";
  }
};

// Runs FetchRanges over the whole entry against one scripted answer.
Status FetchAgainst(const std::string& answer, const FakeObject& obj,
                    std::vector<std::string>* got) {
  ScriptedHttpServer server({[&](const ScriptedRequest&) { return answer; }});
  HttpClient http(FastRetries(1));
  auto tokens = MakeStaticTokenSource(XetToken{"t", server.url(), 0});
  CasClient cas(http, *tokens);
  FetchEntry entry = obj.entry;
  entry.url = server.url() + entry.url;
  got->clear();
  Status st = cas.FetchRanges(entry, 0, 2, [&](size_t i, std::span<const uint8_t> b) {
    EXPECT_EQ(i, got->size());
    got->emplace_back(b.begin(), b.end());
    return Status::Ok();
  });
  if (!server.requests().empty()) {
    EXPECT_EQ(server.requests()[0].Header("Range"), "bytes=10-19,50-59,100-149");
    EXPECT_EQ(server.requests()[0].Header("Authorization"), "");
  }
  return st;
}

std::string Multipart(const std::string& parts, const std::string& boundary = "BND") {
  return "HTTP/1.1 206 Partial Content\r\nContent-Type: multipart/byteranges; boundary=" +
         boundary + "\r\nContent-Length: " + std::to_string(parts.size()) +
         "\r\nConnection: close\r\n\r\n" + parts;
}

TEST(ClientTransportFaultTest, MultipartAnswersInOrderReorderedOrCoalesced) {
  const FakeObject obj;
  const auto& r = obj.entry.ranges;
  const std::vector<std::string> want = {obj.Slice(r[0]), obj.Slice(r[1]), obj.Slice(r[2])};
  std::vector<std::string> got;

  std::string in_order;
  for (const auto& x : r)
    in_order += FakeObject::Part("BND", x.byte_start, x.byte_end, obj.Slice(x));
  ASSERT_TRUE(FetchAgainst(Multipart(in_order + "--BND--\r\n"), obj, &got).ok());
  EXPECT_EQ(got, want);

  const std::string reordered = FakeObject::Part("BND", 100, 149, want[2]) +
                                FakeObject::Part("BND", 10, 19, want[0]) +
                                FakeObject::Part("BND", 50, 59, want[1]) + "--BND--\r\n";
  ASSERT_TRUE(FetchAgainst(Multipart(reordered), obj, &got).ok());
  EXPECT_EQ(got, want);

  // The first two ranges coalesced into one part (RFC 7233 allows it).
  const std::string coalesced = FakeObject::Part("BND", 10, 59, obj.bytes.substr(10, 50)) +
                                FakeObject::Part("BND", 100, 149, want[2]) + "--BND--\r\n";
  ASSERT_TRUE(FetchAgainst(Multipart(coalesced), obj, &got).ok());
  EXPECT_EQ(got, want);

  // One single-range 206 covering everything, and a plain 200 of the whole object.
  const std::string single =
      "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 10-149/300\r\n"
      "Content-Length: 140\r\n\r\n" +
      obj.bytes.substr(10, 140);
  ASSERT_TRUE(FetchAgainst(single, obj, &got).ok());
  EXPECT_EQ(got, want);
  ASSERT_TRUE(FetchAgainst(ScriptedHttpServer::Response(200, obj.bytes), obj, &got).ok());
  EXPECT_EQ(got, want);
}

TEST(ClientTransportFaultTest, BrokenMultipartAnswersAreCorruption) {
  const FakeObject obj;
  const auto& r = obj.entry.ranges;
  std::vector<std::string> got;
  auto part = [&](size_t i) {
    return FakeObject::Part("BND", r[i].byte_start, r[i].byte_end, obj.Slice(r[i]));
  };
  auto expect_corruption = [&](const std::string& answer, const std::string& needle) {
    const Status st = FetchAgainst(answer, obj, &got);
    EXPECT_EQ(st.code(), Status::Code::kCorruption) << st.ToString();
    EXPECT_NE(st.message().find(needle), std::string::npos) << st.ToString();
  };
  // A missing part.
  expect_corruption(Multipart(part(0) + part(2) + "--BND--\r\n"), "no part for bytes 50-59");
  // Truncated (the connection ends early; Content-Length matches what was sent).
  const std::string all = part(0) + part(1) + part(2) + "--BND--\r\n";
  expect_corruption(Multipart(all.substr(0, all.size() - 40)), "truncated");
  // A different boundary in the body than in the header.
  std::string other = all;
  for (size_t p = other.find("--BND"); p != std::string::npos; p = other.find("--BND", p + 5)) {
    other.replace(p, 5, "--XYZ");
  }
  expect_corruption(Multipart(other), "boundary");
  // A part whose Content-Range does not match its length.
  std::string lying = all;
  lying.replace(lying.find("bytes 50-59"), 11, "bytes 50-58");
  expect_corruption(Multipart(lying), "not followed by the boundary");
  // A multipart answer without a boundary parameter.
  expect_corruption(
      "HTTP/1.1 206 Partial Content\r\nContent-Type: multipart/byteranges\r\n"
      "Content-Length: 0\r\n\r\n",
      "boundary");
  // A single 206 whose Content-Range misses the ranges, or whose body is short.
  expect_corruption(
      "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 10-59/300\r\n"
      "Content-Length: 50\r\n\r\n" +
          obj.bytes.substr(10, 50),
      "no part for bytes 100-149");
  expect_corruption("HTTP/1.1 206 Partial Content\r\nContent-Length: 3\r\n\r\nabc",
                    "Content-Range");
  // A 200 shorter than the object the ranges point into.
  expect_corruption(ScriptedHttpServer::Response(200, obj.bytes.substr(0, 120)),
                    "no part for bytes 100-149");
}

TEST(ClientTransportFaultTest, OversizedMultipartPartIsRefused) {
  const FakeObject obj;
  std::vector<std::string> got;
  const std::string big(1000, 'z');
  const Status st = FetchAgainst(
      Multipart("--BND\r\nContent-Range: bytes 0-999/5000\r\n\r\n" + big + "\r\n--BND--\r\n"), obj,
      &got);
  EXPECT_EQ(st.code(), Status::Code::kResourceExhausted) << st.ToString();
  EXPECT_TRUE(got.empty());
}

TEST(ClientTransportFaultTest, PaginationStaysOnTheEndpoint) {
  ScriptedHttpServer server({
      [](const ScriptedRequest&) {
        return ScriptedHttpServer::Response(
            200, R"([{"id":"ns/a","private":true}])",
            {"Link: <https://public.example/api/buckets/ns?cursor=ns%2Fa>; rel=\"next\""});
      },
      [](const ScriptedRequest&) {
        return ScriptedHttpServer::Response(200, R"([{"id":"ns/b","private":false}])");
      },
  });
  HttpClient http(FastRetries(1));
  HubClient hub(http, server.url() + "/", "hf_token");
  auto list = hub.ListBuckets("ns");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[1].id, "ns/b");
  EXPECT_FALSE((*list)[1].is_private);
  const auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].target, "/api/buckets/ns");
  EXPECT_EQ(reqs[1].target, "/api/buckets/ns?cursor=ns%2Fa");
  for (const auto& q : reqs) EXPECT_EQ(q.Header("Authorization"), "Bearer hf_token");

  // A next link pointing at itself is refused rather than followed forever.
  ScriptedHttpServer loop({[](const ScriptedRequest& r) {
    return ScriptedHttpServer::Response(200, "[]",
                                        {"Link: <http://x" + r.target + ">; rel=\"next\""});
  }});
  HubClient looping(http, loop.url(), "");
  // First page: /api/buckets/ns -> link to the same path on another origin, re-based to the
  // same URL: a loop.
  EXPECT_EQ(looping.ListBuckets("ns").status().code(), Status::Code::kCorruption);
}

TEST(ClientTransportFaultTest, MalformedHubAnswersAreCorruption) {
  ScriptedHttpServer server({
      [](const ScriptedRequest&) { return ScriptedHttpServer::Response(200, "{not json"); },
      [](const ScriptedRequest&) {
        return ScriptedHttpServer::Response(200, R"({"accessToken":"x"})");
      },
      [](const ScriptedRequest&) {
        return ScriptedHttpServer::Response(404, R"({"error":"bucket ns/b not found"})");
      },
  });
  HttpClient http(FastRetries(1));
  HubClient hub(http, server.url(), "hf_t");
  EXPECT_EQ(hub.GetBucket("ns/b").status().code(), Status::Code::kCorruption);
  EXPECT_EQ(hub.GetXetToken("ns/b", true).status().code(), Status::Code::kCorruption);
  auto missing = hub.GetBucket("ns/b");
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
  EXPECT_EQ(missing.status().message(), "bucket ns/b: bucket ns/b not found (HTTP 404)");
}

}  // namespace
}  // namespace xet
