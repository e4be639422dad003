// Conformance: hash string conversion, chunk hashes, merkle aggregation (xorb and
// salted file hashes), verification hashes, against ../shared/conformance vectors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "format/keyed_hash.h"
#include "format/merkle.h"
#include "support/test_support.h"

namespace xet {
namespace {

using testing::HashFromHex;
using testing::LoadConformanceJson;

std::vector<ChunkInfo> ChunksFromJson(const nlohmann::json& arr) {
  std::vector<ChunkInfo> out;
  for (const auto& c : arr) out.push_back({HashFromHex(c[0]), c[1].get<uint64_t>()});
  return out;
}

keys::Key KeyFromHash(const Hash& h) { return h.bytes(); }

TEST(MerkleConformance, AllXetCoreCases) {
  const auto j = LoadConformanceJson("merkle.json");
  ASSERT_EQ(j["cases"].size(), 18u);
  size_t checked = 0;
  for (const auto& c : j["cases"]) {
    const auto chunks = ChunksFromJson(c["chunks"]);
    EXPECT_EQ(XorbHash(chunks).ToHex(), c["xorb_hash"].get<std::string>())
        << "chunks=" << chunks.size();
    ++checked;
    for (const auto& fh : c["file_hashes"]) {
      const Hash salt = HashFromHex(fh[0]);
      EXPECT_EQ(FileHash(chunks, KeyFromHash(salt)).ToHex(), fh[1].get<std::string>())
          << "chunks=" << chunks.size() << " salt=" << fh[0];
      ++checked;
    }
  }
  EXPECT_EQ(checked, 72u);
}

TEST(MerkleConformance, HexConversion) {
  const auto j = LoadConformanceJson("merkle.json");
  for (const char* name : {"hex_conversion"}) {
    const auto& v = j[name];
    const auto raw = v["raw_bytes"].get<std::vector<uint8_t>>();
    ASSERT_EQ(raw.size(), 32u);
    const Hash h = Hash::FromBytes(raw.data());
    EXPECT_EQ(h.ToHex(), v["xet_string"].get<std::string>());
    EXPECT_EQ(HashFromHex(v["xet_string"]), h);
  }
  // The big-endian vector: the string's byte order is the canonical order; raw bytes are
  // each 8-byte group reversed.
  const auto& be = j["hex_conversion_be"];
  const auto canonical = be["canonical_order_bytes"].get<std::vector<uint8_t>>();
  const Hash parsed = HashFromHex(be["xet_string"]);
  for (size_t g = 0; g < 4; ++g) {
    for (size_t b = 0; b < 8; ++b) EXPECT_EQ(parsed.data()[8 * g + b], canonical[8 * g + 7 - b]);
  }
  const auto extra = LoadConformanceJson("extra.json");
  const auto& ex = extra["hash_string_example"];
  const auto raw = ex["raw_bytes"].get<std::vector<uint8_t>>();
  EXPECT_EQ(Hash::FromBytes(raw.data()).ToHex(), ex["xet_string"].get<std::string>());
}

TEST(MerkleConformance, InternalNodeAndVerificationVectors) {
  const auto j = LoadConformanceJson("extra.json");
  const auto& node = j["internal_node"];
  const auto children = ChunksFromJson(node["children"]);
  EXPECT_EQ(XorbHash(children).ToHex(), node["node_hash"].get<std::string>());
  const std::string buffer = node["buffer_ascii"];
  EXPECT_EQ(KeyedBlake3(keys::kInternalNodeKey, buffer.data(), buffer.size()).ToHex(),
            node["node_hash"].get<std::string>());

  const auto& ver = j["verification_two_hashes"];
  std::vector<Hash> hashes;
  std::string concat;
  for (const auto& hx : ver["chunk_hashes"]) {
    hashes.push_back(HashFromHex(hx));
    concat += hashes.back().ToRawHex();
  }
  EXPECT_EQ(concat, ver["concatenated_raw_hex"].get<std::string>());
  EXPECT_EQ(VerificationHash(hashes).ToHex(), ver["verification_hash"].get<std::string>());
}

TEST(MerkleConformance, ExtraChunkHashes) {
  const auto j = LoadConformanceJson("extra.json");
  ASSERT_EQ(j["chunk_hash"].size(), 3u);
  for (const auto& v : j["chunk_hash"]) {
    const std::string ascii = v["input_ascii"];
    const Hash h = ChunkHash({reinterpret_cast<const uint8_t*>(ascii.data()), ascii.size()});
    EXPECT_EQ(h.ToHex(), v["chunk_hash"].get<std::string>()) << ascii;
    EXPECT_EQ(h.ToRawHex(), v["chunk_hash_raw_hex"].get<std::string>()) << ascii;
  }
}

TEST(MerkleConformance, EvPopulationChunksFile) {
  // 796 lines of "<hash> <length>": xorb hash, file hash and full-range verification hash.
  const auto bytes = testing::LoadConformanceFile("reference/ev-population.csv.chunks");
  std::string text(bytes.begin(), bytes.end());
  std::vector<ChunkInfo> chunks;
  std::vector<Hash> hashes;
  size_t pos = 0;
  uint64_t total = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    ASSERT_NE(nl, std::string::npos);
    const std::string line = text.substr(pos, nl - pos);
    const size_t sp = line.find(' ');
    ASSERT_EQ(sp, 64u);
    chunks.push_back({HashFromHex(line.substr(0, 64)), std::stoull(line.substr(65))});
    hashes.push_back(chunks.back().hash);
    total += chunks.back().size;
    pos = nl + 1;
  }
  ASSERT_EQ(chunks.size(), 796u);
  EXPECT_EQ(total, 63527244u);
  EXPECT_EQ(XorbHash(chunks).ToHex(),
            "eea25d6ee393ccae385820daed127b96ef0ea034dfb7cf6da3a950ce334b7632");
  EXPECT_EQ(FileHash(chunks).ToHex(),
            "118a53328412787fee04011dcf82fdc4acf3a4a1eddec341c910d30a306aaf97");
  EXPECT_EQ(VerificationHash(hashes).ToHex(),
            "d81c11b1fc9bc2a25587108c675bbfe65ca2e5d350b0cd92c58329fcc8444178");
  // Eligible for global dedup (besides chunk 0): exactly index 756, per extra.json.
  const auto extra = LoadConformanceJson("extra.json");
  std::vector<size_t> eligible;
  for (size_t i = 0; i < hashes.size(); ++i) {
    if (IsGlobalDedupEligible(hashes[i])) eligible.push_back(i);
  }
  EXPECT_EQ(eligible,
            extra["ev_population"]["global_dedup_eligible_indices"].get<std::vector<size_t>>());
}

TEST(MerkleConformance, SplitMixSeed0Hashes) {
  const auto j = LoadConformanceJson("extra.json")["splitmix64_seed0_1000000"];
  const auto chunks = ChunksFromJson(j["chunks"]);
  ASSERT_EQ(chunks.size(), 19u);
  EXPECT_EQ(XorbHash(chunks).ToHex(), j["xorb_hash"].get<std::string>());
  EXPECT_EQ(FileHash(chunks).ToHex(), j["file_hash"].get<std::string>());
  std::vector<Hash> hashes;
  for (const auto& c : chunks) hashes.push_back(c.hash);
  EXPECT_EQ(VerificationHash(hashes).ToHex(), j["verification_hash_0_19"].get<std::string>());
  EXPECT_EQ(VerificationHash(std::span(hashes).first(3)).ToHex(),
            j["verification_hash_0_3"].get<std::string>());
  for (size_t i = 0; i < hashes.size(); ++i) {
    EXPECT_FALSE(IsGlobalDedupEligible(hashes[i])) << i;  // the vector lists none
  }
  EXPECT_TRUE(j["global_dedup_eligible_indices"].empty());
}

}  // namespace
}  // namespace xet
