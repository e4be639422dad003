// Unit tests for DownloadTransfer against a scripted CAS (one reconstruction answer, then
// the xorb range): a streamed block's terms get the chunks' bytes and hashes; a damaged
// range fails the transfer with Corruption and ends the waits; a refused reconstruction is
// StartBlock's error; the first failure is the one kept.
#include "client/download/download_transfer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "client/cas/cas_client.h"
#include "client/transport/http_client.h"
#include "format/keyed_hash.h"
#include "format/xorb.h"
#include "support/scripted_http_server.h"

namespace xet {
namespace {

using testing::ScriptedHttpServer;
using testing::ScriptedRequest;

const std::string kXorbHex(64, 'a');

// Two stored chunk records.
struct TwoChunks {
  std::vector<std::vector<uint8_t>> raw = {std::vector<uint8_t>(300, 7),
                                           std::vector<uint8_t>(200, 9)};
  std::string records;
  TwoChunks() {
    for (const auto& c : raw) {
      XorbChunkHeader h;
      h.compressed_size = h.uncompressed_size = static_cast<uint32_t>(c.size());
      uint8_t header[kXorbChunkHeaderSize];
      EncodeXorbChunkHeader(h, header);
      records.append(reinterpret_cast<const char*>(header), sizeof header);
      records.append(c.begin(), c.end());
    }
  }
  uint64_t file_size() const { return raw[0].size() + raw[1].size(); }
};

// The reconstruction of the whole file: one term, chunks [0, 2) of the xorb at `url`.
std::string ReconstructionJson(const std::string& url, const TwoChunks& c) {
  const std::string n = std::to_string(c.file_size());
  const std::string last = std::to_string(c.records.size() - 1);
  return R"({"offset_into_first_range":0,"terms":[{"hash":")" + kXorbHex +
         R"(","unpacked_length":)" + n + R"(,"range":{"start":0,"end":2}}],"xorbs":{")" + kXorbHex +
         R"(":[{"url":")" + url +
         R"(/xorb","ranges":[{"chunks":{"start":0,"end":2},"bytes":{"start":0,"end":)" + last +
         "}}]}]}}";
}

std::string RangeAnswer(const std::string& records) {
  return ScriptedHttpServer::Response(
      206, records,
      {"Content-Range: bytes 0-" + std::to_string(records.size() - 1) + "/" +
       std::to_string(records.size())});
}

struct Cas {
  explicit Cas(const std::string& url)
      : tokens(MakeStaticTokenSource(XetToken{"tok", url, 4102444800})), cas(http, *tokens) {}
  HttpClient http;
  std::unique_ptr<CasTokenSource> tokens;
  CasClient cas;
};

DownloadOptions Options() {
  DownloadOptions o;
  o.fetch_concurrency = 2;
  return o;
}

TEST(DownloadTransfer, StreamsABlocksTermsWithTheirChunkHashes) {
  const TwoChunks c;
  std::string base;
  ScriptedHttpServer server({[&](const ScriptedRequest&) {
                               return ScriptedHttpServer::Response(
                                   200, ReconstructionJson(base, c),
                                   {"Content-Type: application/json"});
                             },
                             [&](const ScriptedRequest&) { return RangeAnswer(c.records); }});
  base = server.url();
  Cas cas(base);
  const DownloadOptions options = Options();
  DownloadTransfer t(cas.cas, options, nullptr, DownloadTransfer::Mode::kStream, nullptr,
                     /*hash_chunks=*/true);
  auto block = t.StartBlock(Hash{}, 0, ByteSpan{0, c.file_size() - 1});
  ASSERT_TRUE(block.ok()) << block.status().ToString();
  EXPECT_EQ(t.blocks_in_flight(), 1u);
  ASSERT_TRUE(t.WaitTerm(*block, 0));
  ASSERT_TRUE(t.WaitBlock(*block)) << t.error().ToString();
  std::vector<uint8_t> want = c.raw[0];
  want.insert(want.end(), c.raw[1].begin(), c.raw[1].end());
  const UninitializedBytes& got = (*block)->term_bytes[0];
  EXPECT_TRUE(std::equal(want.begin(), want.end(), got.begin(), got.end()));
  const std::vector<ChunkInfo> chunks = BlockChunks(**block);
  const std::vector<ChunkInfo> want_chunks = {{ChunkHash(c.raw[0]), 300},
                                              {ChunkHash(c.raw[1]), 200}};
  EXPECT_EQ(chunks, want_chunks);
  t.Release(*block);
  EXPECT_EQ(t.blocks_in_flight(), 0u);
  EXPECT_TRUE(t.error().ok());
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[1].target, "/xorb");
}

TEST(DownloadTransfer, ADamagedRangeFailsTheTransfer) {
  TwoChunks c;
  std::string damaged = c.records;
  damaged[0] = 9;  // header version
  std::string base;
  ScriptedHttpServer server({[&](const ScriptedRequest&) {
                               return ScriptedHttpServer::Response(
                                   200, ReconstructionJson(base, c),
                                   {"Content-Type: application/json"});
                             },
                             [&](const ScriptedRequest&) { return RangeAnswer(damaged); }});
  base = server.url();
  Cas cas(base);
  const DownloadOptions options = Options();
  DownloadTransfer t(cas.cas, options, nullptr, DownloadTransfer::Mode::kStream, nullptr);
  auto block = t.StartBlock(Hash{}, 0, ByteSpan{0, c.file_size() - 1});
  ASSERT_TRUE(block.ok()) << block.status().ToString();
  EXPECT_FALSE(t.WaitTerm(*block, 0));
  EXPECT_FALSE(t.WaitBlock(*block));
  EXPECT_EQ(t.WaitAnyBlock(), nullptr);
  EXPECT_EQ(t.error().code(), Status::Code::kCorruption) << t.error().ToString();
  // A later failure does not replace the first.
  t.Fail(Status::Cancelled("later"));
  EXPECT_EQ(t.error().code(), Status::Code::kCorruption);
  t.Drain();
}

TEST(DownloadTransfer, ARefusedReconstructionIsStartBlocksError) {
  ScriptedHttpServer server(
      {[](const ScriptedRequest&) { return ScriptedHttpServer::Response(404, "{}"); }});
  Cas cas(server.url());
  const DownloadOptions options = Options();
  DownloadTransfer t(cas.cas, options, nullptr, DownloadTransfer::Mode::kStream, nullptr);
  auto block = t.StartBlock(Hash{}, 0, ByteSpan{0, 99});
  ASSERT_FALSE(block.ok());
  EXPECT_EQ(block.status().code(), Status::Code::kNotFound) << block.status().ToString();
  EXPECT_EQ(t.blocks_in_flight(), 0u);
  EXPECT_TRUE(t.error().ok());  // StartBlock's errors are the caller's to report
  t.Fail(Status::Cancelled("stopped"));
  EXPECT_EQ(t.WaitAnyBlock(), nullptr);
  EXPECT_EQ(t.error().code(), Status::Code::kCancelled);
}

}  // namespace
}  // namespace xet
