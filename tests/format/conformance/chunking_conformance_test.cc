// Conformance: chunk boundaries from xet-core's chunker tests and the reference files.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "format/chunker.h"
#include "format/gear_table.h"
#include "support/test_support.h"

namespace xet {
namespace {

using testing::LoadConformanceFile;
using testing::LoadConformanceJson;

TEST(ChunkingConformance, GearTableMatchesReference) {
  const auto bytes = LoadConformanceFile("gear_table.txt");
  std::string text(bytes.begin(), bytes.end());
  size_t i = 0, pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    ASSERT_NE(nl, std::string::npos);
    ASSERT_LT(i, 256u);
    EXPECT_EQ(kGearTable[i], std::stoull(text.substr(pos, nl - pos), nullptr, 16)) << i;
    ++i;
    pos = nl + 1;
  }
  EXPECT_EQ(i, 256u);
}

TEST(ChunkingConformance, Random1MB) {
  const auto j = LoadConformanceJson("chunking.json")["random_1mb"];
  const auto data = testing::SplitMix64Bytes(j["seed"], j["n"]);
  for (auto& [idx, val] : j["byte_checks"].items()) {
    EXPECT_EQ(data[std::stoul(idx)], val.get<int>()) << "generator byte " << idx;
  }
  EXPECT_EQ(ChunkBoundaries(data), j["boundaries"].get<std::vector<uint64_t>>());
}

TEST(ChunkingConformance, Constant1MB) {
  const auto j = LoadConformanceJson("chunking.json")["constant_1mb"];
  const std::vector<uint8_t> data(j["n"].get<size_t>(), j["byte"].get<uint8_t>());
  EXPECT_EQ(ChunkBoundaries(data), j["boundaries"].get<std::vector<uint64_t>>());
}

TEST(ChunkingConformance, HittingDataAll128Paddings) {
  const auto j = LoadConformanceJson("chunking.json")["hitting_data"];
  const auto pattern = j["pattern"].get<std::vector<uint8_t>>();
  const size_t n = j["n"];
  ASSERT_EQ(j["cases"].size(), 128u);
  for (const auto& c : j["cases"]) {
    const size_t padding = c["padding"];
    std::vector<uint8_t> base = pattern;
    base.resize(pattern.size() + padding, 0);
    std::vector<uint8_t> data(n);
    for (size_t k = 0; k < n; ++k) data[k] = base[k % base.size()];
    ASSERT_EQ(data[11111], c["data_at_11111"].get<uint8_t>()) << "padding " << padding;
    EXPECT_EQ(ChunkBoundaries(data), c["boundaries"].get<std::vector<uint64_t>>())
        << "padding " << padding;
  }
}

TEST(ChunkingConformance, SplitMixSeed1) {
  const auto j = LoadConformanceJson("extra.json")["splitmix64_seed1_256000"];
  const auto data = testing::SplitMix64Bytes(1, 256000);
  EXPECT_EQ(ChunkBoundaries(data), j["boundaries"].get<std::vector<uint64_t>>());
}

}  // namespace
}  // namespace xet
