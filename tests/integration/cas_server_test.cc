// The CAS API end to end: a real `xetstore serve` on a loopback port, driven over HTTP
// with real xorbs and shards, including every error status the spec lists.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "format/compression.h"
#include "format/merkle.h"
#include "format/shard_parser.h"
#include "format/xorb.h"
#include "protocol/byte_range.h"
#include "support/curl_client.h"
#include "support/server_process.h"
#include "support/subprocess.h"
#include "support/test_support.h"
#include "support/xet_fixtures.h"

namespace xet {
namespace {

using nlohmann::json;
using testing::Bearer;
using testing::Fetch;
using testing::HttpResult;
using testing::SerializeForUpload;
using testing::ServerProcess;
using testing::UploadArtifacts;

HttpResult PostXorb(const ServerProcess& s, const std::string& token, const SerializedXorb& x) {
  return Fetch("POST", s.url() + "/v1/xorbs/default/" + x.hash.ToHex(), {Bearer(token)},
               testing::AsString(x.bytes));
}

// Uploads every xorb and the shard; expects success.
void Upload(const ServerProcess& s, const std::string& token, const UploadArtifacts& a) {
  for (const auto& x : a.xorbs) {
    const auto r = PostXorb(s, token, x);
    ASSERT_EQ(r.status, 200) << r.body;
  }
  const auto r = Fetch("POST", s.url() + "/v1/shards", {Bearer(token)}, a.shard_bytes);
  ASSERT_EQ(r.status, 200) << r.body;
}

// Splits a multipart/byteranges body into its parts' payloads.
std::vector<std::string> MultipartParts(const std::string& content_type, const std::string& body) {
  const std::string key = "boundary=";
  const size_t at = content_type.find(key);
  EXPECT_NE(at, std::string::npos) << content_type;
  const std::string delim = "--" + content_type.substr(at + key.size());
  std::vector<std::string> parts;
  size_t pos = body.find(delim);
  while (pos != std::string::npos) {
    pos += delim.size();
    if (body.compare(pos, 2, "--") == 0) break;
    const size_t header_end = body.find("\r\n\r\n", pos);
    const size_t next = body.find("\r\n" + delim, header_end);
    parts.push_back(body.substr(header_end + 4, next - header_end - 4));
    pos = body.find(delim, next);
  }
  return parts;
}

// Downloads the bytes a v2 reconstruction answer describes, the way a client does:
// one multi-range GET per fetch entry (no Authorization), then terms in order.
std::string Download(const json& recon, uint64_t want_bytes) {
  std::map<std::pair<std::string, uint32_t>, std::string> chunks;
  for (auto& [xorb, entries] : recon["xorbs"].items()) {
    for (const auto& e : entries) {
      std::string range = "Range: bytes=";
      for (size_t i = 0; i < e["ranges"].size(); ++i) {
        const auto& b = e["ranges"][i]["bytes"];
        range += (i ? "," : "") + std::to_string(b["start"].get<uint64_t>()) + "-" +
                 std::to_string(b["end"].get<uint64_t>());
      }
      const auto r = Fetch("GET", e["url"], {range});
      EXPECT_EQ(r.status, 206) << r.body;
      const auto parts = e["ranges"].size() == 1
                             ? std::vector<std::string>{r.body}
                             : MultipartParts(r.headers.at("content-type"), r.body);
      EXPECT_EQ(parts.size(), e["ranges"].size());
      ChunkCodec codec;
      for (size_t i = 0; i < parts.size(); ++i) {
        const auto& c = e["ranges"][i]["chunks"];
        std::span<const uint8_t> rest(reinterpret_cast<const uint8_t*>(parts[i].data()),
                                      parts[i].size());
        for (uint32_t idx = c["start"]; idx < c["end"].get<uint32_t>(); ++idx) {
          std::vector<uint8_t> out;
          auto n = ExtractXorbChunk(rest, codec, &out);
          EXPECT_TRUE(n.ok()) << n.status().ToString();
          if (!n.ok()) return {};
          chunks[{xorb, idx}] = testing::AsString(out);
          rest = rest.subspan(*n);
        }
        EXPECT_TRUE(rest.empty());
      }
    }
  }
  std::string out;
  for (const auto& t : recon["terms"]) {
    std::string term;
    for (uint32_t i = t["range"]["start"]; i < t["range"]["end"].get<uint32_t>(); ++i) {
      term += chunks.at({t["hash"], i});
    }
    EXPECT_EQ(term.size(), t["unpacked_length"].get<uint64_t>());
    out += term;
  }
  out.erase(0, recon["offset_into_first_range"].get<uint64_t>());
  if (out.size() > want_bytes) out.resize(want_bytes);
  return out;
}

class CasServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(testing::MakeTempDir("cas"));
    admin_ = server_->AdminToken();
    ASSERT_TRUE(admin_.starts_with("hf_")) << admin_;
    writer_ = server_->CreateToken("write", "team/a");
    reader_ = server_->CreateToken("read", "team/a");
    other_ = server_->CreateToken("write", "team/b");
  }

  std::string Url(const std::string& path) const { return server_->url() + path; }

  std::unique_ptr<ServerProcess> server_;
  std::string admin_, writer_, reader_, other_;
};

TEST_F(CasServerTest, AdminTokenFileIsPrivate) {
  struct stat st {};
  ASSERT_EQ(::stat((server_->data_dir() + "/admin-token").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_NE(server_->Log().find(admin_), std::string::npos);  // printed once at first start
}

TEST_F(CasServerTest, UploadThenDownloadWholeFileAndRanges) {
  const auto data = testing::TextLikeBytes(3'000'000, 1);
  const auto a = testing::PrepareUpload(data);
  Upload(*server_, writer_, a);

  auto head = Fetch("HEAD", Url("/v1/files/" + a.file_hash.ToHex()), {Bearer(reader_)});
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.headers["content-length"], std::to_string(data.size()));

  const auto r = Fetch("GET", Url("/v2/reconstructions/" + a.file_hash.ToHex()), {Bearer(reader_)});
  ASSERT_EQ(r.status, 200) << r.body;
  const json recon = json::parse(r.body);
  EXPECT_EQ(recon["offset_into_first_range"], 0);
  EXPECT_EQ(Download(recon, data.size()), testing::AsString(data));

  // A range starting mid-chunk and ending mid-chunk.
  const uint64_t first = a.chunks[0].size + 12345, last = first + 200'000;
  const auto rr = Fetch(
      "GET", Url("/v2/reconstructions/" + a.file_hash.ToHex()),
      {Bearer(reader_), "Range: bytes=" + std::to_string(first) + "-" + std::to_string(last)});
  ASSERT_EQ(rr.status, 200) << rr.body;
  const json rj = json::parse(rr.body);
  EXPECT_EQ(rj["offset_into_first_range"], 12345);
  EXPECT_EQ(rj["terms"][0]["range"]["start"], 1);
  EXPECT_EQ(Download(rj, last - first + 1),
            testing::AsString(std::span(data).subspan(first, last - first + 1)));

  // Past the end: 416.
  const auto past = Fetch("GET", Url("/v2/reconstructions/" + a.file_hash.ToHex()),
                          {Bearer(reader_), "Range: bytes=" + std::to_string(data.size()) + "-"});
  EXPECT_EQ(past.status, 416) << past.body;

  // v1 answers one signed URL per term range.
  const auto v1 =
      Fetch("GET", Url("/v1/reconstructions/" + a.file_hash.ToHex()), {Bearer(reader_)});
  ASSERT_EQ(v1.status, 200) << v1.body;
  const json v1j = json::parse(v1.body);
  EXPECT_EQ(v1j["terms"].size(), recon["terms"].size());
  EXPECT_TRUE(v1j.contains("fetch_info"));

  // Batch.
  const json keys = json::array({{{"prefix", "default"}, {"hash", a.file_hash.ToHex()}}});
  const auto batch = Fetch("POST", Url("/v1/reconstructions"), {Bearer(reader_)}, keys.dump());
  ASSERT_EQ(batch.status, 200) << batch.body;
  EXPECT_TRUE(json::parse(batch.body)["files"].contains(a.file_hash.ToHex()));
}

TEST_F(CasServerTest, XorbUploadIsValidatedAndIdempotent) {
  const auto a = testing::PrepareUpload(testing::RandomBytes(400'000, 2));
  const SerializedXorb& x = a.xorbs[0];
  const std::string path = "/v1/xorbs/default/" + x.hash.ToHex();
  auto r = PostXorb(*server_, writer_, x);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["was_inserted"], true);
  r = PostXorb(*server_, writer_, x);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body)["was_inserted"], false);

  auto head = Fetch("HEAD", Url(path), {Bearer(reader_)});
  EXPECT_EQ(head.status, 200);
  EXPECT_GT(std::stoull(head.headers["content-length"]), x.bytes.size());  // footer stored

  const std::string body = testing::AsString(x.bytes);
  // Wrong hash in the path, truncated, corrupted, empty, bad prefix, bad hex.
  EXPECT_EQ(Fetch("POST", Url("/v1/xorbs/default/" + a.file_hash.ToHex()), {Bearer(writer_)}, body)
                .status,
            400);
  EXPECT_EQ(Fetch("POST", Url(path), {Bearer(writer_)}, body.substr(0, body.size() - 1)).status,
            400);
  std::string corrupt = body;
  corrupt[corrupt.size() / 2] ^= 0x40;
  EXPECT_EQ(Fetch("POST", Url(path), {Bearer(writer_)}, corrupt).status, 400);
  EXPECT_EQ(Fetch("POST", Url(path), {Bearer(writer_)}, "").status, 400);
  EXPECT_EQ(Fetch("POST", Url("/v1/xorbs/other/" + x.hash.ToHex()), {Bearer(writer_)}, body).status,
            400);
  EXPECT_EQ(Fetch("POST", Url("/v1/xorbs/default/xyz"), {Bearer(writer_)}, body).status, 400);
  // Auth: none, garbage, read-only.
  EXPECT_EQ(Fetch("POST", Url(path), {}, body).status, 401);
  EXPECT_EQ(Fetch("POST", Url(path), {Bearer("hf_0000")}, body).status, 401);
  EXPECT_EQ(Fetch("POST", Url(path), {"Authorization: Basic abc"}, body).status, 401);
  EXPECT_EQ(Fetch("POST", Url(path), {Bearer(reader_)}, body).status, 403);
  // Over the route's body limit: 413 before the body is read.
  EXPECT_EQ(Fetch("POST", Url(path), {Bearer(writer_)}, std::string((65 << 20) + 1, 'x')).status,
            413);
}

TEST_F(CasServerTest, ShardUploadValidatesEverything) {
  const auto a = testing::PrepareUpload(testing::TextLikeBytes(500'000, 3));
  // Shard before its xorb: 400.
  auto r = Fetch("POST", Url("/v1/shards"), {Bearer(writer_)}, a.shard_bytes);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("upload xorbs before the shard"), std::string::npos) << r.body;
  for (const auto& x : a.xorbs) ASSERT_EQ(PostXorb(*server_, writer_, x).status, 200);

  auto bad = a.shard;
  bad.files[0].verification[0].range_hash = Hash();
  EXPECT_EQ(Fetch("POST", Url("/v1/shards"), {Bearer(writer_)}, SerializeForUpload(bad)).status,
            400);
  bad = a.shard;
  bad.files[0].file_hash = a.chunks[0].hash;
  EXPECT_EQ(Fetch("POST", Url("/v1/shards"), {Bearer(writer_)}, SerializeForUpload(bad)).status,
            400);
  bad = a.shard;
  bad.files[0].terms[0].chunk_index_end += 1;
  EXPECT_EQ(Fetch("POST", Url("/v1/shards"), {Bearer(writer_)}, SerializeForUpload(bad)).status,
            400);
  bad = a.shard;
  bad.files[0].terms[0].unpacked_segment_bytes += 1;
  EXPECT_EQ(Fetch("POST", Url("/v1/shards"), {Bearer(writer_)}, SerializeForUpload(bad)).status,
            400);
  bad = a.shard;
  bad.cas_infos[0].entries[0].unpacked_segment_bytes += 1;
  EXPECT_EQ(Fetch("POST", Url("/v1/shards"), {Bearer(writer_)}, SerializeForUpload(bad)).status,
            400);
  EXPECT_EQ(Fetch("POST", Url("/v1/shards"), {Bearer(writer_)}, "garbage").status, 400);
  EXPECT_EQ(
      Fetch("POST", Url("/v1/shards"), {Bearer(writer_)}, a.shard_bytes.substr(0, 100)).status,
      400);
  // None of the bad shards registered the file.
  EXPECT_EQ(Fetch("HEAD", Url("/v1/files/" + a.file_hash.ToHex()), {Bearer(writer_)}).status, 404);

  r = Fetch("POST", Url("/v1/shards"), {Bearer(writer_)}, a.shard_bytes);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["result"], 1);
  r = Fetch("POST", Url("/v1/shards"), {Bearer(writer_)}, a.shard_bytes);
  EXPECT_EQ(json::parse(r.body)["result"], 0);
  EXPECT_EQ(Fetch("POST", Url("/v1/shards"), {Bearer(reader_)}, a.shard_bytes).status, 403);
}

TEST_F(CasServerTest, StreamingShardUploadEndsWithResultOrError) {
  const auto a = testing::PrepareUpload(testing::TextLikeBytes(300'000, 4));
  for (const auto& x : a.xorbs) ASSERT_EQ(PostXorb(*server_, writer_, x).status, 200);
  auto bad = a.shard;
  bad.files[0].verification[0].range_hash = Hash();
  auto r = Fetch("POST", Url("/v2/shards"), {Bearer(writer_)}, SerializeForUpload(bad));
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["content-type"], "application/x-ndjson");
  std::string last = r.body.substr(r.body.rfind('\n', r.body.size() - 2) + 1);
  EXPECT_EQ(json::parse(last)["type"], "error") << r.body;

  r = Fetch("POST", Url("/v2/shards"), {Bearer(writer_)}, a.shard_bytes);
  ASSERT_EQ(r.status, 200);
  last = r.body.substr(r.body.rfind('\n', r.body.size() - 2) + 1);
  EXPECT_EQ(json::parse(last)["type"], "result") << r.body;
  EXPECT_EQ(json::parse(last)["result"], 1);
  EXPECT_EQ(Fetch("HEAD", Url("/v1/files/" + a.file_hash.ToHex()), {Bearer(reader_)}).status, 200);
}

TEST_F(CasServerTest, GlobalDedupAnswersAProtectedShard) {
  const auto a = testing::PrepareUpload(testing::RandomBytes(600'000, 5));
  Upload(*server_, writer_, a);
  const Hash first = a.chunks[0].hash;  // the first chunk of a file is always eligible
  for (const char* prefix : {"default-merkledb", "default"}) {
    const auto r = Fetch("GET", Url(std::string("/v1/chunks/") + prefix + "/" + first.ToHex()),
                         {Bearer(reader_)});
    ASSERT_EQ(r.status, 200) << r.body;
    const auto shard = ParseShard({reinterpret_cast<const uint8_t*>(r.body.data()), r.body.size()});
    ASSERT_TRUE(shard.ok()) << shard.status().ToString();
    ASSERT_TRUE(shard->footer.has_value());
    EXPECT_TRUE(shard->files.empty());
    ASSERT_EQ(shard->cas_infos.size(), 1u);
    EXPECT_EQ(shard->cas_infos[0].cas_hash, a.xorbs[0].hash);
    const Hash key = shard->footer->chunk_hash_hmac_key;
    EXPECT_FALSE(key.IsZero());
    EXPECT_GT(shard->footer->shard_key_expiry, shard->footer->shard_creation_timestamp);
    EXPECT_EQ(shard->cas_infos[0].entries[0].chunk_hash, DedupProtectedHash(first, key));
  }
  // Unknown chunk: 404; malformed: 400; bad prefix: 400.
  EXPECT_EQ(
      Fetch("GET", Url("/v1/chunks/default-merkledb/" + a.file_hash.ToHex()), {Bearer(reader_)})
          .status,
      404);
  EXPECT_EQ(Fetch("GET", Url("/v1/chunks/default-merkledb/zz"), {Bearer(reader_)}).status, 400);
  EXPECT_EQ(Fetch("GET", Url("/v1/chunks/nope/" + first.ToHex()), {Bearer(reader_)}).status, 400);
}

TEST_F(CasServerTest, KnowingAHashIsNotEnoughToRead) {
  const auto a = testing::PrepareUpload(testing::TextLikeBytes(400'000, 6));
  Upload(*server_, writer_, a);
  const std::string fid = a.file_hash.ToHex();
  // team/b's token sees nothing of team/a's data.
  EXPECT_EQ(Fetch("HEAD", Url("/v1/files/" + fid), {Bearer(other_)}).status, 404);
  EXPECT_EQ(Fetch("GET", Url("/v2/reconstructions/" + fid), {Bearer(other_)}).status, 404);
  EXPECT_EQ(Fetch("GET", Url("/v1/reconstructions/" + fid), {Bearer(other_)}).status, 404);
  EXPECT_EQ(
      Fetch("HEAD", Url("/v1/xorbs/default/" + a.xorbs[0].hash.ToHex()), {Bearer(other_)}).status,
      404);
  EXPECT_EQ(
      Fetch("GET", Url("/v1/chunks/default-merkledb/" + a.chunks[0].hash.ToHex()), {Bearer(other_)})
          .status,
      404);
  // Nor can it claim the xorb in a shard of its own.
  EXPECT_EQ(Fetch("POST", Url("/v1/shards"), {Bearer(other_)}, a.shard_bytes).status, 400);
  // The admin sees everything.
  EXPECT_EQ(Fetch("HEAD", Url("/v1/files/" + fid), {Bearer(admin_)}).status, 200);
}

TEST_F(CasServerTest, TransferUrlsAreSelfAuthorizingAndTamperProof) {
  const auto data = testing::RandomBytes(700'000, 7);
  const auto a = testing::PrepareUpload(data);
  Upload(*server_, writer_, a);
  const json recon = json::parse(
      Fetch("GET", Url("/v2/reconstructions/" + a.file_hash.ToHex()), {Bearer(reader_)}).body);
  const auto& entry = recon["xorbs"].begin().value()[0];
  const std::string url = entry["url"];
  const auto& bytes = entry["ranges"][0]["bytes"];
  const uint64_t b0 = bytes["start"], b1 = bytes["end"];
  const std::string full = "Range: bytes=" + std::to_string(b0) + "-" + std::to_string(b1);
  EXPECT_EQ(Fetch("GET", url, {full}).status, 206);
  // A sub-range of the signed set is fine (split single-range GETs).
  const auto sub =
      Fetch("GET", url, {"Range: bytes=" + std::to_string(b0) + "-" + std::to_string(b0 + 99)});
  EXPECT_EQ(sub.status, 206);
  EXPECT_EQ(sub.body.size(), 100u);
  // Outside the signed set; no Range; tampered signature/expiry/xorb.
  EXPECT_EQ(
      Fetch("GET", url, {"Range: bytes=" + std::to_string(b1 + 1) + "-" + std::to_string(b1 + 10)})
          .status,
      403);
  EXPECT_EQ(Fetch("GET", url).status, 403);
  std::string tampered = url;
  tampered[tampered.size() - 1] = tampered.back() == '0' ? '1' : '0';
  EXPECT_EQ(Fetch("GET", tampered, {full}).status, 403);
  const size_t exp = url.find("Expires=");
  ASSERT_NE(exp, std::string::npos);
  std::string later = url;
  later.insert(exp + 8, "9");
  EXPECT_EQ(Fetch("GET", later, {full}).status, 403);
}

TEST_F(CasServerTest, DataSurvivesRestartAndKill) {
  const auto data = testing::TextLikeBytes(1'500'000, 8);
  const auto a = testing::PrepareUpload(data);
  Upload(*server_, writer_, a);
  EXPECT_EQ(server_->Terminate(), 0);  // graceful SIGTERM exits 0
  const std::string dir = server_->data_dir();
  server_ = std::make_unique<ServerProcess>(dir);
  EXPECT_EQ(server_->Log().find("admin token"), std::string::npos);  // not re-created
  auto r = Fetch("GET", Url("/v2/reconstructions/" + a.file_hash.ToHex()), {Bearer(reader_)});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Download(json::parse(r.body), data.size()), testing::AsString(data));

  // SIGKILL right after another upload: what was acknowledged is there after restart.
  const auto b = testing::PrepareUpload(testing::TextLikeBytes(800'000, 9));
  Upload(*server_, writer_, b);
  server_->Kill();
  server_ = std::make_unique<ServerProcess>(dir);
  EXPECT_EQ(Fetch("HEAD", Url("/v1/files/" + b.file_hash.ToHex()), {Bearer(reader_)}).status, 200);
}

TEST_F(CasServerTest, MetricsCountUploadsAndDedup) {
  const auto a = testing::PrepareUpload(testing::RandomBytes(300'000, 10));
  Upload(*server_, writer_, a);
  ASSERT_EQ(PostXorb(*server_, writer_, a.xorbs[0]).status, 200);  // already existed
  Fetch("GET", Url("/v1/chunks/default-merkledb/" + a.chunks[0].hash.ToHex()), {Bearer(reader_)});
  Fetch("GET", Url("/v1/chunks/default-merkledb/" + a.file_hash.ToHex()), {Bearer(reader_)});
  Fetch("POST", Url("/v1/shards"), {Bearer(writer_)}, "junk");
  const auto m = Fetch("GET", Url("/metrics"));
  ASSERT_EQ(m.status, 200);
  for (const char* line : {"xetstore_xorbs_uploaded_total{result=\"inserted\"} 1",
                           "xetstore_xorbs_uploaded_total{result=\"existed\"} 1",
                           "xetstore_shards_uploaded_total{result=\"registered\"} 1",
                           "xetstore_dedup_queries_total{result=\"hit\"} 1",
                           "xetstore_dedup_queries_total{result=\"miss\"} 1",
                           "xetstore_uploads_rejected_total 1", "xetstore_index_errors_total 0"}) {
    EXPECT_NE(m.body.find(line), std::string::npos) << line << "\n" << m.body;
  }
}

// Transfer GETs a reconstruction answer lists (one per fetch entry).
size_t FetchEntries(const json& recon) {
  size_t n = 0;
  for (const auto& [xorb, entries] : recon["xorbs"].items()) n += entries.size();
  return n;
}

// The counter line of the recent-xorb cache for `result` ("hit"/"miss") with `value`.
std::string RecentXorbLine(const char* result, size_t value) {
  return std::string("xetstore_recent_xorb_cache_total{result=\"") + result + "\"} " +
         std::to_string(value) + "\n";
}

// Xorbs just uploaded are answered from the server's memory (server/cache/recent_xorb_cache.h),
// byte for byte what the store holds; after a restart they come from the store again, and
// with --recent-xorb-cache-mb 0 the cache is never consulted.
TEST_F(CasServerTest, RecentlyUploadedXorbsAreServedFromMemory) {
  std::vector<uint8_t> data;
  const auto a = testing::PrepareInterleavedUpload(300, 4096, 33, &data);  // multi-range fetches
  Upload(*server_, writer_, a);
  const auto download_all = [&] {  // from whichever server runs now
    const std::string v2 = Url("/v2/reconstructions/" + a.file_hash.ToHex());
    const auto r = Fetch("GET", v2, {Bearer(reader_)});
    EXPECT_EQ(r.status, 200) << r.body;
    const json recon = json::parse(r.body);
    EXPECT_EQ(Download(recon, data.size()), testing::AsString(data));
    const auto part = Fetch("GET", v2, {Bearer(reader_), "Range: bytes=5000-90000"});
    EXPECT_EQ(part.status, 200) << part.body;
    const json part_recon = json::parse(part.body);
    EXPECT_EQ(Download(part_recon, 85001), testing::AsString(std::span(data).subspan(5000, 85001)));
    return FetchEntries(recon) + FetchEntries(part_recon);
  };
  const size_t gets = download_all();
  ASSERT_GT(gets, 2u);
  auto m = Fetch("GET", Url("/metrics")).body;
  EXPECT_NE(m.find(RecentXorbLine("hit", gets)), std::string::npos) << m;
  EXPECT_NE(m.find(RecentXorbLine("miss", 0)), std::string::npos) << m;

  const std::string dir = server_->data_dir();
  EXPECT_EQ(server_->Terminate(), 0);
  server_ = std::make_unique<ServerProcess>(dir);
  EXPECT_EQ(download_all(), gets);
  m = Fetch("GET", Url("/metrics")).body;
  EXPECT_NE(m.find(RecentXorbLine("hit", 0)), std::string::npos) << m;
  EXPECT_NE(m.find(RecentXorbLine("miss", gets)), std::string::npos) << m;

  EXPECT_EQ(server_->Terminate(), 0);
  server_ =
      std::make_unique<ServerProcess>(dir, std::vector<std::string>{"--recent-xorb-cache-mb", "0"});
  const auto b = testing::PrepareUpload(testing::RandomBytes(200'000, 34));
  Upload(*server_, writer_, b);
  EXPECT_EQ(download_all(), gets);
  m = Fetch("GET", Url("/metrics")).body;
  EXPECT_NE(m.find(RecentXorbLine("hit", 0)), std::string::npos) << m;
  EXPECT_NE(m.find(RecentXorbLine("miss", 0)), std::string::npos) << m;
}

TEST_F(CasServerTest, InterleavedTermsUseMultiRangeFetches) {
  std::vector<uint8_t> data;
  const auto a = testing::PrepareInterleavedUpload(40, 9000, 12, &data);
  Upload(*server_, writer_, a);
  const auto r = Fetch("GET", Url("/v2/reconstructions/" + a.file_hash.ToHex()), {Bearer(reader_)});
  ASSERT_EQ(r.status, 200) << r.body;
  const json recon = json::parse(r.body);
  EXPECT_EQ(recon["terms"].size(), 40u);
  ASSERT_EQ(recon["xorbs"].size(), 2u);
  for (auto& [xorb, entries] : recon["xorbs"].items()) {
    ASSERT_EQ(entries.size(), 1u);  // one fetch entry per xorb, all its chunks merged
    EXPECT_EQ(entries[0]["ranges"].size(), 1u);
    EXPECT_EQ(entries[0]["ranges"][0]["chunks"]["end"], 20);
  }
  EXPECT_EQ(Download(recon, data.size()), testing::AsString(data));
  // A range over a few terms in the middle.
  const auto rr = Fetch("GET", Url("/v2/reconstructions/" + a.file_hash.ToHex()),
                        {Bearer(reader_), "Range: bytes=50000-99999"});
  ASSERT_EQ(rr.status, 200);
  EXPECT_EQ(Download(json::parse(rr.body), 50000),
            testing::AsString(std::span(data).subspan(50000, 50000)));
}

TEST_F(CasServerTest, FileChunkHashesForDirtyRanges) {
  std::vector<uint8_t> data;
  const auto a = testing::PrepareInterleavedUpload(30, 20000, 14, &data);
  Upload(*server_, writer_, a);
  const std::string path = "/v2/file-chunk-hashes/" + a.file_hash.ToHex();
  const auto r = Fetch("GET", Url(path), {Bearer(reader_), "X-Range-Dirty: bytes=100000-100010"});
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = json::parse(r.body);
  EXPECT_EQ(j["totalChunks"], 30);
  EXPECT_EQ(j["fileSize"], data.size());
  ASSERT_GE(j["windows"].size(), 1u);
  const auto& w = j["windows"][0]["dirtyByteRange"];
  EXPECT_LE(w[0].get<uint64_t>(), 100000u);  // expanded outward to chunk boundaries
  EXPECT_EQ(w[0].get<uint64_t>() % 20000, 0u);
  EXPECT_GT(w[1].get<uint64_t>(), 100010u);
  EXPECT_EQ(j["hashRanges"].size(), j["windows"].size() + 1);
  EXPECT_EQ(Fetch("GET", Url(path), {Bearer(reader_)}).status, 400);  // header required
  EXPECT_EQ(Fetch("GET", Url(path), {Bearer(reader_), "X-Range-Dirty: nonsense"}).status, 400);
  EXPECT_EQ(Fetch("GET", Url(path), {Bearer(other_), "X-Range-Dirty: bytes=0-1"}).status, 404);
}

TEST_F(CasServerTest, ReconstructionAnswersAreCompressedWhenAsked) {
  std::vector<uint8_t> data;
  const auto a = testing::PrepareInterleavedUpload(60, 2000, 13, &data);
  Upload(*server_, writer_, a);
  const std::string path = "/v2/reconstructions/" + a.file_hash.ToHex();
  const auto plain = Fetch("GET", Url(path), {Bearer(reader_)});
  ASSERT_EQ(plain.status, 200);
  ASSERT_GT(plain.body.size(), 4096u);  // 60 terms: well above the compression threshold
  EXPECT_EQ(plain.headers.count("content-encoding"), 0u);
  for (const char* enc : {"gzip", "zstd"}) {
    auto r = Fetch("GET", Url(path), {Bearer(reader_), std::string("Accept-Encoding: ") + enc});
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(r.headers["content-encoding"], enc);
    EXPECT_LT(r.body.size(), plain.body.size());
  }
}

// Answers of >= 4,096 terms are streamed; whole-file ones are kept in the answer cache and
// sent again byte for byte (same signed URLs) with a Content-Length, after the same access
// checks. Ranges and compressed answers are built fresh.
TEST_F(CasServerTest, LargeAnswersAreCachedAfterTheAccessCheck) {
  std::vector<uint8_t> data;
  const auto a = testing::PrepareInterleavedUpload(5000, 64, 15, &data);
  Upload(*server_, writer_, a);
  const std::string v2 = Url("/v2/reconstructions/" + a.file_hash.ToHex());
  const std::string v1 = Url("/v1/reconstructions/" + a.file_hash.ToHex());
  const auto first = Fetch("GET", v2, {Bearer(reader_)});
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(first.headers.count("content-length"), 0u);  // streamed while written
  EXPECT_EQ(json::parse(first.body)["terms"].size(), 5000u);

  const auto second = Fetch("GET", v2, {Bearer(reader_)});
  ASSERT_EQ(second.status, 200);
  EXPECT_EQ(second.headers.at("content-length"), std::to_string(first.body.size()));
  EXPECT_EQ(second.body, first.body);
  EXPECT_EQ(Download(json::parse(second.body), data.size()), testing::AsString(data));

  // A scope that cannot see the file gets nothing from the cache either.
  EXPECT_EQ(Fetch("GET", v2, {Bearer(other_)}).status, 404);
  EXPECT_EQ(Fetch("GET", v2, {}).status, 401);
  // v1 answers are cached apart from v2 ones.
  const auto v1_first = Fetch("GET", v1, {Bearer(reader_)});
  ASSERT_EQ(v1_first.status, 200);
  EXPECT_NE(v1_first.body, first.body);
  EXPECT_EQ(Fetch("GET", v1, {Bearer(reader_)}).body, v1_first.body);
  // A range is planned fresh.
  const auto ranged = Fetch("GET", v2, {Bearer(reader_), "Range: bytes=1000-1999"});
  ASSERT_EQ(ranged.status, 200);
  EXPECT_EQ(Download(json::parse(ranged.body), 1000),
            testing::AsString(std::span(data).subspan(1000, 1000)));

  const auto m = Fetch("GET", Url("/metrics"));
  for (const char* line : {"xetstore_answer_cache_total{result=\"hit\"} 2",
                           "xetstore_answer_cache_total{result=\"miss\"} 2"}) {
    EXPECT_NE(m.body.find(line), std::string::npos) << line;
  }
}

}  // namespace
}  // namespace xet

namespace xet {
namespace {

// An answer without its signed URLs (their expiry differs from one second to the next).
json WithoutUrls(const std::string& body) {
  json j = json::parse(body);
  for (const char* section : {"xorbs", "fetch_info"}) {
    if (!j.contains(section)) continue;
    for (auto& [xorb, entries] : j[section].items()) {
      for (auto& e : entries) e.erase("url");
    }
  }
  return j;
}

TEST_F(CasServerTest, AWarmedStartAnswersExactlyAsAColdOne) {
  std::vector<uint8_t> data;
  const auto a = testing::PrepareInterleavedUpload(5000, 64, 15, &data);
  Upload(*server_, writer_, a);
  const std::string dir = server_->data_dir();
  const std::string id = a.file_hash.ToHex();
  const uint64_t size = data.size();
  const std::vector<std::string> ranges = {
      "",  // the whole file
      "Range: bytes=3-" + std::to_string(size - 6),
      "Range: bytes=0-0",
      "Range: bytes=" + std::to_string(size - 1) + "-",
      "Range: bytes=1000-1999",
      "Range: bytes=" + std::to_string(size / 3) + "-" + std::to_string(2 * size / 3),
      "Range: bytes=" + std::to_string(size) + "-",  // 416
  };
  auto answers = [&](std::vector<std::string>* raw) {
    std::vector<json> out;
    for (const char* version : {"/v2/", "/v1/"}) {
      for (const std::string& r : ranges) {
        std::vector<std::string> headers = {Bearer(reader_)};
        if (!r.empty()) headers.push_back(r);
        const auto res = Fetch("GET", server_->url() + version + "reconstructions/" + id, headers);
        out.push_back({{"status", res.status}});
        if (res.status == 200) {
          out.back()["body"] = WithoutUrls(res.body);
          if (raw && std::string(version) == "/v2/") raw->push_back(res.body);
        }
      }
    }
    return out;
  };

  ASSERT_EQ(server_->Terminate(), 0);
  server_ = std::make_unique<ServerProcess>(dir, std::vector<std::string>{"--warm-cache-mb", "0"});
  EXPECT_EQ(server_->Log().find("xetstore: cached"), std::string::npos);
  const std::vector<json> cold = answers(nullptr);
  EXPECT_EQ(cold.back()["status"], 416);

  ASSERT_EQ(server_->Terminate(), 0);
  server_ = std::make_unique<ServerProcess>(dir);
  const std::string want_log = "xetstore: cached " + std::to_string(a.xorbs.size()) +
                               " xorb tables, 1 file records and 1 whole-file plans";
  EXPECT_NE(server_->Log().find(want_log), std::string::npos) << server_->Log();
  std::vector<std::string> raw;
  const std::vector<json> warm = answers(&raw);
  ASSERT_EQ(warm.size(), cold.size());
  for (size_t i = 0; i < warm.size(); ++i) EXPECT_EQ(warm[i], cold[i]) << i;
  // And the warm answers download the right bytes (the trimmed whole file here).
  ASSERT_GE(raw.size(), 2u);
  EXPECT_EQ(Download(json::parse(raw[1]), size - 8),
            testing::AsString(std::span(data).subspan(3, size - 8)));
}

}  // namespace
}  // namespace xet

namespace xet {
namespace {

// GET /v2/reconstructions?chunk_detail=1 (xetstore extension): every chunk of the answer is
// a sub-range its signed URL serves, decoding to exactly its listed length.
TEST_F(CasServerTest, ChunkDetailLetsAClientFetchSingleChunks) {
  const auto data = testing::RandomBytes(700'000, 21);
  const auto a = testing::PrepareUpload(data);
  Upload(*server_, writer_, a);
  const std::string v2 = Url("/v2/reconstructions/" + a.file_hash.ToHex());
  const auto plain = Fetch("GET", v2, {Bearer(reader_)});
  ASSERT_EQ(plain.status, 200) << plain.body;
  EXPECT_EQ(plain.body.find("chunk_"), std::string::npos);
  const auto detailed = Fetch("GET", v2 + "?chunk_detail=1", {Bearer(reader_)});
  ASSERT_EQ(detailed.status, 200) << detailed.body;
  const json recon = json::parse(detailed.body);
  // The detail answer is the plain one plus the two arrays.
  json stripped = recon;
  for (auto& t : stripped["terms"]) t.erase("chunk_lengths");
  for (auto& [xorb, entries] : stripped["xorbs"].items()) {
    for (auto& e : entries) {
      e.erase("url");
      for (auto& r : e["ranges"]) r.erase("chunk_offsets");
    }
  }
  json plain_j = json::parse(plain.body);
  for (auto& [xorb, entries] : plain_j["xorbs"].items()) {
    for (auto& e : entries) e.erase("url");
  }
  EXPECT_EQ(stripped, plain_j);
  EXPECT_EQ(Download(recon, data.size()), testing::AsString(data));

  // Each chunk's length, by (xorb, chunk index), from the terms.
  std::map<std::pair<std::string, uint32_t>, uint64_t> lengths;
  uint64_t chunks_in_terms = 0;
  for (const auto& t : recon["terms"]) {
    const uint32_t start = t["range"]["start"];
    ASSERT_EQ(t["chunk_lengths"].size(), t["range"]["end"].get<uint32_t>() - start);
    for (size_t i = 0; i < t["chunk_lengths"].size(); ++i) {
      lengths[{t["hash"], start + static_cast<uint32_t>(i)}] = t["chunk_lengths"][i];
      ++chunks_in_terms;
    }
  }
  ASSERT_GT(chunks_in_terms, 3u);
  size_t fetched = 0;
  uint64_t decoded_total = 0;
  for (auto& [xorb, entries] : recon["xorbs"].items()) {
    for (const auto& e : entries) {
      for (const auto& r : e["ranges"]) {
        const uint32_t start = r["chunks"]["start"];
        const uint32_t end = r["chunks"]["end"];
        const auto& offsets = r["chunk_offsets"];
        ASSERT_EQ(offsets.size(), end - start + 1);
        EXPECT_EQ(offsets.front(), r["bytes"]["start"]);
        EXPECT_EQ(offsets.back().get<uint64_t>(), r["bytes"]["end"].get<uint64_t>() + 1);
        for (uint32_t c = start; c < end; ++c) {
          const uint64_t first = offsets[c - start];
          const uint64_t last = offsets[c - start + 1].get<uint64_t>() - 1;
          const auto got =
              Fetch("GET", e["url"],
                    {"Range: bytes=" + std::to_string(first) + "-" + std::to_string(last)});
          ASSERT_EQ(got.status, 206) << got.body;
          ASSERT_EQ(got.body.size(), last - first + 1);
          ChunkCodec codec;
          std::vector<uint8_t> out;
          std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(got.body.data()),
                                         got.body.size());
          auto n = ExtractXorbChunk(bytes, codec, &out);
          ASSERT_TRUE(n.ok()) << n.status().ToString();
          EXPECT_EQ(*n, got.body.size());  // exactly one chunk record
          const auto want = lengths.find({xorb, c});
          ASSERT_NE(want, lengths.end()) << c;
          EXPECT_EQ(out.size(), want->second);
          decoded_total += out.size();
          ++fetched;
        }
      }
    }
  }
  EXPECT_EQ(fetched, chunks_in_terms);  // this file repeats no chunk
  EXPECT_EQ(decoded_total, data.size());
  // A range of the file gets detail too; a bad value is 400.
  const auto ranged = Fetch("GET", v2 + "?chunk_detail=1", {Bearer(reader_), "Range: bytes=5-9"});
  ASSERT_EQ(ranged.status, 200);
  EXPECT_EQ(json::parse(ranged.body)["terms"][0]["chunk_lengths"].size(), 1u);
  EXPECT_EQ(Fetch("GET", v2 + "?chunk_detail=yes", {Bearer(reader_)}).status, 400);
  EXPECT_EQ(Fetch("GET", v2 + "?chunk_detail=0", {Bearer(reader_)}).body.find("chunk_"),
            std::string::npos);
}

TEST_F(CasServerTest, TheAnswerCacheKeepsDetailedAndPlainAnswersApart) {
  std::vector<uint8_t> data;
  const auto a = testing::PrepareInterleavedUpload(5000, 64, 15, &data);
  Upload(*server_, writer_, a);
  const std::string v2 = Url("/v2/reconstructions/" + a.file_hash.ToHex());
  const auto plain = Fetch("GET", v2, {Bearer(reader_)});
  const auto detail = Fetch("GET", v2 + "?chunk_detail=1", {Bearer(reader_)});
  const auto plain2 = Fetch("GET", v2, {Bearer(reader_)});
  const auto detail2 = Fetch("GET", v2 + "?chunk_detail=true", {Bearer(reader_)});
  for (const auto* r : {&plain, &detail, &plain2, &detail2}) ASSERT_EQ(r->status, 200);
  EXPECT_EQ(plain.body.find("chunk_lengths"), std::string::npos);
  EXPECT_NE(detail.body.find("chunk_lengths"), std::string::npos);
  EXPECT_EQ(plain2.body, plain.body);    // from the cache, without detail
  EXPECT_EQ(detail2.body, detail.body);  // from the cache, with detail
  EXPECT_EQ(Download(json::parse(detail2.body), data.size()), testing::AsString(data));
  const auto m = Fetch("GET", Url("/metrics"));
  for (const char* line : {"xetstore_answer_cache_total{result=\"hit\"} 2",
                           "xetstore_answer_cache_total{result=\"miss\"} 2"}) {
    EXPECT_NE(m.body.find(line), std::string::npos) << line;
  }
}

}  // namespace
}  // namespace xet
