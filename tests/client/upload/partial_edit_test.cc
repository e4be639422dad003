// UploadEdited (client/upload/partial_edit.h) against a scripted server whose answers parse
// but contradict the base file's reconstruction, or each other: every such answer must be
// an error before anything is uploaded (only the two GETs reach the server), never a file.
// (The real server, and the hashes of the files composed from its answers:
// tests/integration/partial_edit_test.cc.)
#include "client/upload/partial_edit.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "client/cas/cas_client.h"
#include "client/transport/http_client.h"
#include "format/merkle.h"
#include "format/merkle_subtree.h"
#include "support/scripted_http_server.h"

namespace xet {
namespace {

using testing::ScriptedHttpServer;
using testing::ScriptedRequest;

Hash HashOf(uint8_t tag) {
  std::array<uint8_t, 32> raw{};
  raw[0] = tag;
  raw[9] = static_cast<uint8_t>(tag * 31 + 1);
  return Hash::FromArray(raw);
}

// The base: 1,000 bytes in chunks of 300, 200, 300 and 200 bytes; term 0 holds chunk 0 (xorb
// A), term 1 chunks 1-3 (xorb B, chunk indices 0-2).
const std::vector<ChunkInfo> kChunks = {
    {HashOf(1), 300}, {HashOf(2), 200}, {HashOf(3), 300}, {HashOf(4), 200}};

std::string Reconstruction(bool detail = true) {
  const std::string a = HashOf(0xa0).ToHex();
  const std::string b = HashOf(0xb0).ToHex();
  const std::string t0 = R"({"hash":")" + a +
                         R"(","unpacked_length":300,"range":{"start":0,"end":1})" +
                         (detail ? R"(,"chunk_lengths":[300]})" : "}");
  const std::string t1 = R"({"hash":")" + b +
                         R"(","unpacked_length":700,"range":{"start":0,"end":3})" +
                         (detail ? R"(,"chunk_lengths":[200,300,200]})" : "}");
  return R"({"offset_into_first_range":0,"terms":[)" + t0 + "," + t1 + R"(],"xorbs":{")" + a +
         R"(":[{"url":"http://127.0.0.1:1/a","ranges":[{"chunks":{"start":0,"end":1},"bytes":{"start":0,"end":307}}]}],")" +
         b +
         R"(":[{"url":"http://127.0.0.1:1/b","ranges":[{"chunks":{"start":0,"end":3},"bytes":{"start":0,"end":723}}]}]}})";
}

// An answer for a window [300, 500) (chunk 1): gap 0 is term 0 whole, gap 1 chunks 2-3.
struct Answer {
  std::string total = "4";
  std::string windows = R"([{"dirtyByteRange":[300,500]}])";
  std::string gap0 = MerkleHashSubtree::FromChunks(true, {kChunks.data(), 1}, false).ToJson();
  std::string gap1 = MerkleHashSubtree::FromChunks(false, {kChunks.data() + 2, 2}, true).ToJson();
  std::string whole = "[\"" + VerificationHash(std::vector<Hash>{HashOf(1)}).ToHex() + "\"]";
  std::string pieces = "[\"" + VerificationHash(std::vector<Hash>{HashOf(1)}).ToHex() + "\",\"" +
                       VerificationHash(std::vector<Hash>{HashOf(3), HashOf(4)}).ToHex() + "\"]";
  bool with_pieces = true;
  std::string tails;  // windowTails, absent when empty

  std::string Json() const {
    std::string s = R"({"totalChunks":)" + total + R"(,"fileSize":1000,"windows":)" + windows +
                    R"(,"hashRanges":[)" + gap0 + "," + gap1 + R"(],"gapVerification":)" + whole;
    if (with_pieces) s += R"(,"gapPieceVerification":)" + pieces;
    if (!tails.empty()) s += R"(,"windowTails":)" + tails;
    return s + "}";
  }
};

class MemoryContent final : public EditedContent {
 public:
  Status Prepare(uint64_t, uint64_t) override {
    ++prepares;
    return Status::Ok();
  }
  Result<std::unique_ptr<ByteSource>> Open(uint64_t start, uint64_t end) override {
    return std::unique_ptr<ByteSource>(
        new MemorySource(std::span<const uint8_t>(data).subspan(start, end - start)));
  }
  std::vector<uint8_t> data = std::vector<uint8_t>(1000, 7);
  int prepares = 0;
};

// Runs UploadEdited for a write of [350, 360) against a server answering `chunk_hashes` and
// then `recon`; returns its status, and the requests the server saw in *seen.
Status RunEdit(const std::string& chunk_hashes, const std::string& recon,
               std::vector<ScriptedRequest>* seen, int* prepares) {
  ScriptedHttpServer server({
      [&](const ScriptedRequest&) { return ScriptedHttpServer::Response(200, chunk_hashes); },
      [&](const ScriptedRequest&) { return ScriptedHttpServer::Response(200, recon); },
  });
  HttpClient http;
  auto tokens = MakeStaticTokenSource(XetToken{"hf_test", server.url(), 0});
  CasClient cas(http, *tokens);
  FileEdit edit;
  edit.base_hash = HashOf(0xee);
  edit.base_size = 1000;
  edit.base_kept = 1000;
  edit.new_size = 1000;
  edit.changed = {{350, 360}};
  PartialEditOptions options;
  options.min_base_size = 0;
  options.upload.global_dedup = false;
  MemoryContent content;
  auto r = UploadEdited(cas, edit, content, options);
  *seen = server.requests();
  *prepares = content.prepares;
  return r.status();
}

TEST(PartialEditAnswersTest, AnswersThatContradictTheBaseAreErrorsBeforeAnyUpload) {
  struct Case {
    const char* name;
    std::string chunk_hashes;
    std::string recon;
    Status::Code code;
    const char* why;  // in the error message
  };
  std::vector<Case> cases;
  const auto with = [](auto mutate) {
    Answer a;
    mutate(a);
    return a.Json();
  };
  cases.push_back({"window edge inside a chunk", with([](Answer& a) {
                     a.windows = R"([{"dirtyByteRange":[300,450]}])";
                     a.gap1 = R"({"nodes":[{"hash":")" + HashOf(9).ToHex() +
                              R"(","size":550}],"levels":[[1,0]],"at_start":false,"at_end":true})";
                   }),
                   Reconstruction(), Status::Code::kCorruption, "not a chunk boundary"});
  cases.push_back(
      {"dirty range outside every window", with([](Answer& a) {
         a.windows = R"([{"dirtyByteRange":[500,800]}])";
         a.gap0 = MerkleHashSubtree::FromChunks(true, {kChunks.data(), 2}, false).ToJson();
         a.gap1 = MerkleHashSubtree::FromChunks(false, {kChunks.data() + 3, 1}, true).ToJson();
       }),
       Reconstruction(), Status::Code::kCorruption, "outside every window"});
  cases.push_back({"chunk count", with([](Answer& a) { a.total = "3"; }), Reconstruction(),
                   Status::Code::kCorruption, "chunk count"});
  cases.push_back({"too few pieces", with([](Answer& a) { a.pieces = a.whole; }), Reconstruction(),
                   Status::Code::kCorruption, "too few gapPieceVerification"});
  cases.push_back({"too many pieces", with([](Answer& a) {
                     a.pieces = a.pieces.substr(0, a.pieces.size() - 1) + ",\"" +
                                HashOf(5).ToHex() + "\"]";
                   }),
                   Reconstruction(), Status::Code::kCorruption, "too many gap verification"});
  cases.push_back({"whole term disagrees",
                   with([](Answer& a) { a.whole = "[\"" + HashOf(6).ToHex() + "\"]"; }),
                   Reconstruction(), Status::Code::kCorruption, "disagrees"});
  cases.push_back({"extra whole term", with([](Answer& a) {
                     a.whole =
                         a.whole.substr(0, a.whole.size() - 1) + ",\"" + HashOf(6).ToHex() + "\"]";
                   }),
                   Reconstruction(), Status::Code::kCorruption, "too many gap verification"});
  cases.push_back({"tail not the base's chunks", with([](Answer& a) {
                     a.tails = R"([[{"hash":")" + HashOf(8).ToHex() + R"(","size":100}]])";
                   }),
                   Reconstruction(), Status::Code::kCorruption, "not the base's chunks"});
  cases.push_back({"tail holds the change", with([](Answer& a) {
                     a.tails = R"([[{"hash":")" + HashOf(2).ToHex() + R"(","size":200}]])";
                   }),
                   Reconstruction(), Status::Code::kCorruption, "holds changed bytes"});
  cases.push_back({"no piece verification", with([](Answer& a) { a.with_pieces = false; }),
                   Reconstruction(), Status::Code::kUnimplemented, "gapPieceVerification"});
  cases.push_back({"reconstruction without chunk detail", Answer().Json(), Reconstruction(false),
                   Status::Code::kCorruption, "without chunk detail"});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<ScriptedRequest> seen;
    int prepares = 0;
    const Status s = RunEdit(c.chunk_hashes, c.recon, &seen, &prepares);
    EXPECT_EQ(s.code(), c.code) << s.ToString();
    EXPECT_NE(s.message().find(c.why), std::string::npos) << s.ToString();
    for (const ScriptedRequest& r : seen) EXPECT_EQ(r.method, "GET") << r.target;
    EXPECT_LE(seen.size(), 2u);
    EXPECT_EQ(prepares, 0) << "window bytes were fetched for a rejected answer";
  }
}

TEST(PartialEditAnswersTest, TheRequestNamesTheChangedBytesAndA404IsNotFound) {
  ScriptedHttpServer server({[](const ScriptedRequest&) {
    return ScriptedHttpServer::Response(404, R"({"error":"no such route"})");
  }});
  HttpClient http;
  auto tokens = MakeStaticTokenSource(XetToken{"hf_test", server.url(), 0});
  CasClient cas(http, *tokens);
  FileEdit edit;
  edit.base_hash = HashOf(0xee);
  edit.base_size = 1000;
  edit.base_kept = 900;  // truncated, then grown: the base's tail from byte 899 is dirty
  edit.new_size = 1200;
  edit.changed = {{10, 20}, {15, 30}, {950, 1200}};
  PartialEditOptions options;
  options.min_base_size = 0;
  MemoryContent content;
  content.data.resize(1200);
  const auto r = UploadEdited(cas, edit, content, options);
  EXPECT_EQ(r.status().code(), Status::Code::kNotFound) << r.status().ToString();
  const auto seen = server.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].target, "/v2/file-chunk-hashes/" + HashOf(0xee).ToHex());
  EXPECT_EQ(seen[0].Header("X-Range-Dirty"), "bytes=10-29,899-999");
}

}  // namespace
}  // namespace xet
