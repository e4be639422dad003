// ParseFileChunkHashesJson: a well-formed answer, and truncated, malformed and hostile ones
// (windows outside the file or out of order, wrong counts, subtrees that do not hold their
// gap), each of which must be an error, never a plausible answer.
#include "client/cas/file_chunk_hashes_json.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "format/merkle.h"
#include "format/merkle_subtree.h"

namespace xet {
namespace {

// Chunks of `n` bytes each with distinct hashes.
std::vector<ChunkInfo> Chunks(size_t count, uint64_t n, uint8_t tag) {
  std::vector<ChunkInfo> out;
  for (size_t i = 0; i < count; ++i) {
    std::array<uint8_t, 32> raw{};
    raw[0] = tag;
    raw[1] = static_cast<uint8_t>(i);
    raw[2] = static_cast<uint8_t>(i >> 8);
    raw[31] = static_cast<uint8_t>(i * 7 + tag);
    out.push_back({Hash::FromArray(raw), n});
  }
  return out;
}

std::string Hex(uint8_t tag) {
  std::array<uint8_t, 32> raw{};
  raw[5] = tag;
  return Hash::FromArray(raw).ToHex();
}

// A 1,000-byte file: gap [0, 300) of 3 chunks, window [300, 500), gap [500, 800) of 3
// chunks, window [800, 1000), empty trailing gap.
struct Doc {
  std::string total = "10";
  std::string size = "1000";
  std::string windows = R"([{"dirtyByteRange":[300,500]},{"dirtyByteRange":[800,1000]}])";
  std::string gap0 = MerkleHashSubtree::FromChunks(true, Chunks(3, 100, 1), false).ToJson();
  std::string gap1 = MerkleHashSubtree::FromChunks(false, Chunks(3, 100, 2), false).ToJson();
  std::string gap2 = "null";
  std::string verification = "[\"" + Hex(1) + "\"]";
  std::string pieces = "[\"" + Hex(1) + "\",\"" + Hex(2) + "\"]";
  bool with_pieces = true;
  std::string tails = "[[],[{\"hash\":\"" + Hex(7) + "\",\"size\":150}]]";

  std::string Json() const {
    std::string s = R"({"totalChunks":)" + total + R"(,"fileSize":)" + size + R"(,"windows":)" +
                    windows + R"(,"hashRanges":[)" + gap0 + "," + gap1 + "," + gap2 +
                    R"(],"gapVerification":)" + verification;
    if (with_pieces) s += R"(,"gapPieceVerification":)" + pieces;
    if (!tails.empty()) s += R"(,"windowTails":)" + tails;
    return s + "}";
  }
};

Status Parse(const Doc& d, uint64_t size = 1000) {
  return ParseFileChunkHashesJson(d.Json(), size).status();
}

TEST(FileChunkHashesJsonTest, ReadsAWellFormedAnswer) {
  const Doc d;
  auto a = ParseFileChunkHashesJson(d.Json(), 1000);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->total_chunks, 10u);
  EXPECT_EQ(a->file_size, 1000u);
  EXPECT_EQ(a->windows, (std::vector<DirtyWindow>{{300, 500}, {800, 1000}}));
  ASSERT_EQ(a->gaps.size(), 3u);
  EXPECT_EQ(a->gaps[0], MerkleHashSubtree::FromChunks(true, Chunks(3, 100, 1), false));
  EXPECT_EQ(a->gaps[1], MerkleHashSubtree::FromChunks(false, Chunks(3, 100, 2), false));
  EXPECT_FALSE(a->gaps[2].has_value());
  ASSERT_EQ(a->gap_verification.size(), 1u);
  EXPECT_EQ(a->gap_verification[0].ToHex(), Hex(1));
  ASSERT_TRUE(a->gap_piece_verification.has_value());
  EXPECT_EQ(a->gap_piece_verification->size(), 2u);
  ASSERT_TRUE(a->window_tails.has_value());
  ASSERT_EQ(a->window_tails->size(), 2u);
  EXPECT_TRUE((*a->window_tails)[0].empty());
  ASSERT_EQ((*a->window_tails)[1].size(), 1u);
  EXPECT_EQ((*a->window_tails)[1][0].size, 150u);
  EXPECT_EQ((*a->window_tails)[1][0].hash.ToHex(), Hex(7));
  // Unknown fields are ignored; the extension is optional.
  Doc plain;
  plain.with_pieces = false;
  plain.tails.clear();
  std::string body = plain.Json();
  body.insert(1, R"("future":{"x":[1,2]},)");
  a = ParseFileChunkHashesJson(body, 1000);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_FALSE(a->gap_piece_verification.has_value());
  EXPECT_FALSE(a->window_tails.has_value());
}

TEST(FileChunkHashesJsonTest, EveryTruncationIsAnError) {
  const std::string body = Doc().Json();
  for (size_t n = 0; n < body.size(); ++n) {
    const auto a = ParseFileChunkHashesJson(body.substr(0, n), 1000);
    ASSERT_FALSE(a.ok()) << n;
    EXPECT_EQ(a.status().code(), Status::Code::kCorruption) << n;
  }
}

TEST(FileChunkHashesJsonTest, MalformedAnswersAreErrors) {
  for (const std::string body : {"", "[]", "null", "42", "{}", "{\"totalChunks\":-1}", "\xff\xfe",
                                 R"({"totalChunks":1,"fileSize":1000})"}) {
    const auto a = ParseFileChunkHashesJson(body, 1000);
    ASSERT_FALSE(a.ok()) << body;
    EXPECT_EQ(a.status().code(), Status::Code::kCorruption) << body;
  }
  const auto bad = [](auto mutate) {
    Doc d;
    mutate(d);
    return Parse(d).code();
  };
  const auto kBad = Status::Code::kCorruption;
  EXPECT_EQ(bad([](Doc& d) { d.total = "\"10\""; }), kBad);
  EXPECT_EQ(bad([](Doc& d) { d.size = "1000.5"; }), kBad);
  EXPECT_EQ(bad([](Doc& d) { d.windows = "{}"; }), kBad);
  EXPECT_EQ(bad([](Doc& d) { d.windows = R"([{"dirtyByteRange":[300]}])"; }), kBad);
  EXPECT_EQ(bad([](Doc& d) { d.windows = R"([{"dirtyByteRange":"300-500"}])"; }), kBad);
  EXPECT_EQ(bad([](Doc& d) { d.verification = "[\"xyz\"]"; }), kBad);
  EXPECT_EQ(bad([](Doc& d) { d.verification = "[42]"; }), kBad);
  EXPECT_EQ(bad([](Doc& d) { d.pieces = "\"" + Hex(1) + "\""; }), kBad);
  EXPECT_EQ(bad([](Doc& d) { d.gap1 = R"({"nodes":[],"levels":[]})"; }), kBad);
  EXPECT_EQ(bad([](Doc& d) { d.gap1 = "[1,2,3]"; }), kBad);
}

TEST(FileChunkHashesJsonTest, HostileAnswersAreErrors) {
  const auto bad = [](auto mutate, uint64_t size = 1000) {
    Doc d;
    mutate(d);
    return Parse(d, size);
  };
  // Not the file asked about.
  EXPECT_FALSE(bad([](Doc&) {}, 999).ok());
  // Windows past the end, empty, reversed, overlapping, out of order, none at all.
  EXPECT_FALSE(bad([](Doc& d) {
                 d.windows = R"([{"dirtyByteRange":[300,500]},{"dirtyByteRange":[800,1001]}])";
               }).ok());
  EXPECT_FALSE(bad([](Doc& d) {
                 d.windows = R"([{"dirtyByteRange":[300,300]},{"dirtyByteRange":[800,1000]}])";
               }).ok());
  EXPECT_FALSE(bad([](Doc& d) {
                 d.windows = R"([{"dirtyByteRange":[500,300]},{"dirtyByteRange":[800,1000]}])";
               }).ok());
  EXPECT_FALSE(bad([](Doc& d) {
                 d.windows = R"([{"dirtyByteRange":[300,900]},{"dirtyByteRange":[800,1000]}])";
               }).ok());
  EXPECT_FALSE(bad([](Doc& d) {
                 d.windows = R"([{"dirtyByteRange":[800,1000]},{"dirtyByteRange":[300,500]}])";
               }).ok());
  EXPECT_FALSE(bad([](Doc& d) { d.windows = "[]"; }).ok());
  EXPECT_FALSE(
      bad([](Doc& d) {
        d.windows =
            R"([{"dirtyByteRange":[300,500]},{"dirtyByteRange":[800,18446744073709551615]}])";
      }).ok());
  // Wrong number of gap entries.
  EXPECT_FALSE(bad([](Doc& d) { d.windows = R"([{"dirtyByteRange":[300,500]}])"; }).ok());
  // Null for a non-empty gap; a subtree for an empty one.
  EXPECT_FALSE(bad([](Doc& d) { d.gap1 = "null"; }).ok());
  EXPECT_FALSE(bad([](Doc& d) {
                 d.gap2 = MerkleHashSubtree::FromChunks(false, Chunks(1, 1, 3), true).ToJson();
               }).ok());
  // A subtree that does not hold its gap's bytes, or claims the wrong position.
  EXPECT_FALSE(bad([](Doc& d) {
                 d.gap1 = MerkleHashSubtree::FromChunks(false, Chunks(3, 99, 2), false).ToJson();
               }).ok());
  EXPECT_FALSE(bad([](Doc& d) {
                 d.gap1 = MerkleHashSubtree::FromChunks(false, Chunks(4, 100, 2), false).ToJson();
               }).ok());
  EXPECT_FALSE(bad([](Doc& d) {
                 d.gap1 = MerkleHashSubtree::FromChunks(true, Chunks(3, 100, 2), false).ToJson();
               }).ok());
  EXPECT_FALSE(bad([](Doc& d) {
                 d.gap0 = MerkleHashSubtree::FromChunks(false, Chunks(3, 100, 1), false).ToJson();
               }).ok());
  EXPECT_FALSE(bad([](Doc& d) {
                 d.gap1 = MerkleHashSubtree::FromChunks(false, Chunks(3, 100, 2), true).ToJson();
               }).ok());
  // Node sizes that overflow when added up.
  EXPECT_FALSE(bad([](Doc& d) {
                 d.gap1 = R"({"nodes":[{"hash":")" + Hex(1) +
                          R"(","size":18446744073709551615},{"hash":")" + Hex(2) +
                          R"(","size":301}],"levels":[[2,0]],"at_start":false,"at_end":false})";
               }).ok());
  // Window tails: not one per window, not a list, chunks without a hash or of no or too
  // many bytes, more bytes than their window.
  const std::string h = "\"hash\":\"" + Hex(7) + "\"";
  EXPECT_FALSE(bad([](Doc& d) { d.tails = "[[]]"; }).ok());
  EXPECT_FALSE(bad([](Doc& d) { d.tails = "{}"; }).ok());
  EXPECT_FALSE(bad([](Doc& d) { d.tails = "[[],7]"; }).ok());
  EXPECT_FALSE(bad([&](Doc& d) { d.tails = "[[],[{" + h + ",\"size\":0}]]"; }).ok());
  EXPECT_FALSE(bad([&](Doc& d) { d.tails = "[[],[{" + h + ",\"size\":131073}]]"; }).ok());
  EXPECT_FALSE(bad([](Doc& d) { d.tails = "[[],[{\"size\":100}]]"; }).ok());
  EXPECT_FALSE(bad([&](Doc& d) {
                 d.tails = "[[],[{" + h + ",\"size\":150},{" + h + ",\"size\":51}]]";
               }).ok());
  EXPECT_TRUE(bad([&](Doc& d) {
                d.tails = "[[],[{" + h + ",\"size\":150},{" + h + ",\"size\":50}]]";
              }).ok());
  // Level counts that do not add up to the nodes.
  EXPECT_FALSE(bad([](Doc& d) {
                 d.gap1 = R"({"nodes":[{"hash":")" + Hex(1) +
                          R"(","size":300}],"levels":[[2,0]],"at_start":false,"at_end":false})";
               }).ok());
}

}  // namespace
}  // namespace xet
