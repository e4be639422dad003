// MerkleHashSubtree: composition of subtrees over consecutive runs must finalize to
// MerkleRoot / FileHash of all the chunks, for any split; the JSON form must round-trip.
// Test structure follows xet-core's own tests of the type
// (xet_core_structures/src/merklehash/merkle_hash_subtree.rs); xet-core has no literal
// expected values for it (its expectations are aggregated_node_hash of the same chunks), so
// the literal values checked here are the aggregated-hash vectors of merkle.json.
#include "format/merkle_subtree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "format/keyed_hash.h"
#include "format/merkle.h"
#include "support/test_support.h"

namespace xet {
namespace {

using testing::HashFromHex;

uint64_t SplitMix(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// A pseudo-random hash from `seed`; seed 0 gives the all-zero hash (a natural cut), as
// xet-core's test_merge_with_existing_reference_hashes does.
Hash SeedHash(uint64_t seed) {
  if (seed == 0) return Hash();
  std::array<uint8_t, 32> raw{};
  uint64_t state = seed;
  for (size_t i = 0; i < 4; ++i) {
    const uint64_t w = SplitMix(state);
    std::memcpy(raw.data() + 8 * i, &w, 8);
  }
  return Hash::FromArray(raw);
}

// A hash whose natural-cut property (last word = 0 mod 4) is forced on or off.
Hash HashWithCut(uint64_t seed, bool cut) {
  std::array<uint8_t, 32> raw = SeedHash(seed + 1).bytes();
  raw[24] = static_cast<uint8_t>((raw[24] & ~3u) | (cut ? 0u : 1u));
  return Hash::FromArray(raw);
}

std::vector<ChunkInfo> RandomChunks(std::mt19937_64& rng, size_t n) {
  std::vector<ChunkInfo> out;
  std::uniform_int_distribution<uint64_t> size(100, 9999);
  for (size_t i = 0; i < n; ++i) out.push_back({SeedHash(rng() | 1), size(rng)});
  return out;
}

std::span<const ChunkInfo> Sub(const std::vector<ChunkInfo>& v, size_t b, size_t e) {
  return std::span<const ChunkInfo>(v).subspan(b, e - b);
}

// Root of the subtrees over [0,s1), [s1,s2), ..., [sk, n) merged left to right.
std::optional<Hash> ComposedRoot(const std::vector<ChunkInfo>& chunks,
                                 const std::vector<size_t>& splits) {
  std::vector<MerkleHashSubtree> runs;
  size_t prev = 0;
  for (size_t s : splits) {
    runs.push_back(MerkleHashSubtree::FromChunks(prev == 0, Sub(chunks, prev, s), false));
    prev = s;
  }
  runs.push_back(MerkleHashSubtree::FromChunks(prev == 0, Sub(chunks, prev, chunks.size()), true));
  auto merged = MerkleHashSubtree::Merge(runs);
  if (!merged.ok()) return std::nullopt;
  return merged->Root();
}

Hash FileHashOfRoot(const Hash& root) {
  return KeyedBlake3(keys::kFileHashKey, root.data(), Hash::kSize);
}

TEST(MerkleSubtree, EmptyRun) {
  const auto t = MerkleHashSubtree::FromChunks(true, {}, true);
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(t.Root(), Hash());
  EXPECT_EQ(t.ToJson(), R"({"nodes":[],"levels":[[0,0]],"at_start":true,"at_end":true})");
  EXPECT_EQ(MerkleHashSubtree::Merge({})->Root(), Hash());
  EXPECT_EQ(MerkleHashSubtree().ToJson(),
            R"({"nodes":[],"levels":[[0,0]],"at_start":false,"at_end":false})");
}

TEST(MerkleSubtree, SingleChunk) {
  const ChunkInfo c{SeedHash(42), 1000};
  const auto t = MerkleHashSubtree::FromChunks(true, std::span(&c, 1), true);
  EXPECT_EQ(t.Root(), c.hash);
  EXPECT_EQ(t.ToJson(), R"({"nodes":[{"hash":")" + c.hash.ToHex() +
                            R"(","size":1000}],"levels":[[1,0]],"at_start":true,"at_end":true})");
  for (auto [s, e] : {std::pair{false, true}, {true, false}, {false, false}}) {
    const auto open = MerkleHashSubtree::FromChunks(s, std::span(&c, 1), e);
    EXPECT_FALSE(open.Root().has_value());
    EXPECT_EQ(open.levels().size(), 1u);
    EXPECT_EQ(open.levels()[0], (SubtreeLevel{1, 0}));
  }
}

TEST(MerkleSubtree, WholeRunEqualsMerkleRoot) {
  std::mt19937_64 rng(12345);
  for (size_t n = 0; n <= 120; ++n) {
    const auto chunks = RandomChunks(rng, n);
    const auto t = MerkleHashSubtree::FromChunks(true, chunks, true);
    ASSERT_EQ(t.Root(), MerkleRoot(chunks)) << "n=" << n;
    if (n > 0) {
      EXPECT_EQ(FileHashOfRoot(*t.Root()), FileHash(chunks)) << "n=" << n;
    }
  }
}

TEST(MerkleSubtree, TwoWayMergeEverySplit) {
  std::mt19937_64 rng(99);
  for (size_t n : {2, 3, 5, 9, 10, 16, 17, 33, 64, 100, 200}) {
    for (int trial = 0; trial < 8; ++trial) {
      const auto chunks = RandomChunks(rng, n);
      const Hash expected = MerkleRoot(chunks);
      for (size_t split = 1; split < n; ++split) {
        ASSERT_EQ(ComposedRoot(chunks, {split}), expected) << "n=" << n << " split=" << split;
      }
    }
  }
}

TEST(MerkleSubtree, ThreeWayMergeAllSplits) {
  std::mt19937_64 rng(321);
  for (size_t n : {3, 8, 12, 16, 20, 24, 40}) {
    const auto chunks = RandomChunks(rng, n);
    const Hash expected = MerkleRoot(chunks);
    for (size_t s1 = 1; s1 + 1 < n; ++s1) {
      for (size_t s2 = s1 + 1; s2 < n; ++s2) {
        ASSERT_EQ(ComposedRoot(chunks, {s1, s2}), expected)
            << "n=" << n << " s1=" << s1 << " s2=" << s2;
      }
    }
  }
}

TEST(MerkleSubtree, ManyRandomSplitsIncludingSingleChunkRuns) {
  std::mt19937_64 rng(987);
  for (int trial = 0; trial < 600; ++trial) {
    const size_t n = 1 + rng() % 400;
    const auto chunks = RandomChunks(rng, n);
    // Cut points with run lengths drawn from 1..(small or large), so single-chunk runs and
    // long runs both occur.
    std::vector<size_t> splits;
    const size_t max_run = (trial % 3 == 0) ? 2 : (trial % 3 == 1) ? 12 : 120;
    for (size_t pos = 1 + rng() % max_run; pos < n; pos += 1 + rng() % max_run) {
      splits.push_back(pos);
    }
    ASSERT_EQ(ComposedRoot(chunks, splits), MerkleRoot(chunks))
        << "trial=" << trial << " n=" << n << " runs=" << splits.size() + 1;
  }
}

TEST(MerkleSubtree, EveryRunASingleChunk) {
  std::mt19937_64 rng(5);
  for (size_t n : {2, 9, 10, 50, 300}) {
    const auto chunks = RandomChunks(rng, n);
    std::vector<size_t> splits;
    for (size_t i = 1; i < n; ++i) splits.push_back(i);
    EXPECT_EQ(ComposedRoot(chunks, splits), MerkleRoot(chunks)) << "n=" << n;
  }
}

TEST(MerkleSubtree, MergeAssociativity) {
  // Merging (a+b)+c and a+(b+c) both give the file's root.
  std::mt19937_64 rng(17);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = 3 + rng() % 150;
    const auto chunks = RandomChunks(rng, n);
    const size_t s1 = 1 + rng() % (n - 2);
    const size_t s2 = s1 + 1 + rng() % (n - s1 - 1);
    const auto a = MerkleHashSubtree::FromChunks(true, Sub(chunks, 0, s1), false);
    const auto b = MerkleHashSubtree::FromChunks(false, Sub(chunks, s1, s2), false);
    const auto c = MerkleHashSubtree::FromChunks(false, Sub(chunks, s2, n), true);
    MerkleHashSubtree bc = b;
    ASSERT_TRUE(bc.MergeFrom(c).ok());
    MerkleHashSubtree right_first = a;
    ASSERT_TRUE(right_first.MergeFrom(bc).ok());
    EXPECT_EQ(right_first.Root(), MerkleRoot(chunks)) << "trial=" << trial;
  }
}

// Content-defined group boundaries: sequences whose natural cuts are placed by hand, so
// forced cuts at 9, minimal groups, and every gap around the (2, 8) stability window occur.
TEST(MerkleSubtree, ControlledGroupBoundaries) {
  std::vector<std::vector<bool>> patterns;
  patterns.push_back(std::vector<bool>(40, false));  // only forced cuts (groups of 9)
  patterns.push_back(std::vector<bool>(40, true));   // every node a cut (groups of 3)
  for (size_t gap = 1; gap <= 10; ++gap) {
    std::vector<bool> p(60, false);
    for (size_t i = 0; i < p.size(); i += gap) p[i] = true;
    patterns.push_back(p);
  }
  std::mt19937_64 rng(3);
  for (int r = 0; r < 20; ++r) {
    std::vector<bool> p(80);
    for (size_t i = 0; i < p.size(); ++i) p[i] = rng() % (2 + r % 5) == 0;
    patterns.push_back(p);
  }
  uint64_t seed = 1000;
  for (const auto& p : patterns) {
    std::vector<ChunkInfo> chunks;
    for (bool cut : p) chunks.push_back({HashWithCut(seed++, cut), 64 + seed % 1000});
    const Hash expected = MerkleRoot(chunks);
    for (size_t split = 1; split < chunks.size(); ++split) {
      ASSERT_EQ(ComposedRoot(chunks, {split}), expected) << "split=" << split;
    }
    for (size_t s1 = 1; s1 + 1 < chunks.size(); s1 += 3) {
      for (size_t s2 = s1 + 1; s2 < chunks.size(); s2 += 5) {
        ASSERT_EQ(ComposedRoot(chunks, {s1, s2}), expected) << s1 << "," << s2;
      }
    }
  }
}

// The seed lists of xet-core's test_merge_with_existing_reference_hashes (seed 0 = the zero
// hash, size = seed * 100), every two-way split.
TEST(MerkleSubtree, XetCoreReferenceSeedLists) {
  std::vector<std::vector<uint64_t>> cases = {{1, 2, 3}, {1, 2, 1, 2, 3, 4}, {}, {}, {}};
  for (uint64_t i = 0; i < 8; ++i) cases[2].push_back(i);
  cases[3] = cases[2];
  for (int i = 0; i < 4; ++i) cases[3].push_back(1);
  for (uint64_t i = 0; i < 8; ++i) cases[4].insert(cases[4].end(), {i, i});
  for (const auto& seeds : cases) {
    std::vector<ChunkInfo> chunks;
    for (uint64_t s : seeds) chunks.push_back({SeedHash(s), s * 100});
    const Hash expected = MerkleRoot(chunks);
    for (size_t split = 1; split < chunks.size(); ++split) {
      EXPECT_EQ(ComposedRoot(chunks, {split}), expected)
          << "n=" << chunks.size() << " split=" << split;
    }
  }
}

// The 18 aggregated-hash vectors of xet-core's aggregated_hashes.rs test_correctness
// (conformance/merkle.json): every split into two and three runs gives the literal xorb
// hash, and every salted file hash.
TEST(MerkleSubtree, ConformanceVectorsUnderEverySplit) {
  const auto j = testing::LoadConformanceJson("merkle.json");
  size_t checked = 0;
  for (const auto& c : j["cases"]) {
    std::vector<ChunkInfo> chunks;
    for (const auto& e : c["chunks"]) chunks.push_back({HashFromHex(e[0]), e[1].get<uint64_t>()});
    const Hash expected = HashFromHex(c["xorb_hash"]);
    const size_t n = chunks.size();
    ASSERT_EQ(ComposedRoot(chunks, {}), expected);
    for (size_t s1 = 1; s1 < n; ++s1) {
      ASSERT_EQ(ComposedRoot(chunks, {s1}), expected) << "n=" << n << " split=" << s1;
      for (size_t s2 = s1 + 1; s2 < n; ++s2) {
        ASSERT_EQ(ComposedRoot(chunks, {s1, s2}), expected) << n << ": " << s1 << "," << s2;
        ++checked;
      }
    }
    if (n == 0) continue;
    // Split in the middle when there are two runs to make; a single chunk stays one run.
    const auto root =
        ComposedRoot(chunks, n >= 2 ? std::vector<size_t>{n / 2} : std::vector<size_t>{});
    ASSERT_TRUE(root.has_value()) << "n=" << n;
    for (const auto& fh : c["file_hashes"]) {
      const Hash salt = HashFromHex(fh[0]);
      EXPECT_EQ(KeyedBlake3(salt.data(), root->data(), Hash::kSize), HashFromHex(fh[1]));
    }
  }
  EXPECT_GT(checked, 1000u);
}

TEST(MerkleSubtree, NoRootUnlessClosed) {
  std::mt19937_64 rng(1);
  const auto chunks = RandomChunks(rng, 30);
  EXPECT_FALSE(MerkleHashSubtree::FromChunks(false, chunks, true).Root());
  EXPECT_FALSE(MerkleHashSubtree::FromChunks(true, chunks, false).Root());
  EXPECT_FALSE(MerkleHashSubtree::FromChunks(false, chunks, false).Root());
  auto a = MerkleHashSubtree::FromChunks(true, Sub(chunks, 0, 10), false);
  ASSERT_TRUE(a.MergeFrom(MerkleHashSubtree::FromChunks(false, Sub(chunks, 10, 20), false)).ok());
  EXPECT_FALSE(a.Root());
  EXPECT_TRUE(a.at_start());
  EXPECT_FALSE(a.at_end());
}

TEST(MerkleSubtree, MergeRejectsMisplacedBoundaries) {
  std::mt19937_64 rng(2);
  const auto chunks = RandomChunks(rng, 20);
  auto closed_end = MerkleHashSubtree::FromChunks(true, Sub(chunks, 0, 10), true);
  const auto before = closed_end;
  EXPECT_EQ(
      closed_end.MergeFrom(MerkleHashSubtree::FromChunks(false, Sub(chunks, 10, 20), true)).code(),
      Status::Code::kInvalidArgument);
  EXPECT_EQ(closed_end, before);
  auto left = MerkleHashSubtree::FromChunks(true, Sub(chunks, 0, 10), false);
  EXPECT_EQ(left.MergeFrom(MerkleHashSubtree::FromChunks(true, Sub(chunks, 10, 20), true)).code(),
            Status::Code::kInvalidArgument);
  const std::vector<MerkleHashSubtree> bad = {
      MerkleHashSubtree::FromChunks(true, Sub(chunks, 0, 10), true),
      MerkleHashSubtree::FromChunks(false, Sub(chunks, 10, 20), true)};
  EXPECT_FALSE(MerkleHashSubtree::Merge(bad).ok());
}

TEST(MerkleSubtree, StorageIsLogarithmic) {
  std::mt19937_64 rng(456);
  for (size_t n : {100, 500, 1000, 5000, 20000}) {
    const auto chunks = RandomChunks(rng, n);
    const auto t = MerkleHashSubtree::FromChunks(false, chunks, false);
    const size_t bound = 9 * static_cast<size_t>(std::ceil(std::log2(n))) * 3;
    EXPECT_LE(t.nodes().size(), bound) << "n=" << n;
  }
  // Streaming: batches merged one by one stay small and finalize to the root.
  const auto chunks = RandomChunks(rng, 20000);
  MerkleHashSubtree acc = MerkleHashSubtree::FromChunks(true, Sub(chunks, 0, 1000), false);
  for (size_t pos = 1000; pos < chunks.size(); pos += 1000) {
    const bool last = pos + 1000 >= chunks.size();
    ASSERT_TRUE(
        acc.MergeFrom(MerkleHashSubtree::FromChunks(false, Sub(chunks, pos, pos + 1000), last))
            .ok());
    EXPECT_LE(acc.nodes().size(), 9u * 15 * 3);
  }
  EXPECT_EQ(acc.Root(), MerkleRoot(chunks));
}

// Property of FindStableStart / FindStableEnd: the boundary is a group boundary of the
// aggregation's first level whatever is prepended / appended.
std::vector<size_t> GroupEnds(const std::vector<ChunkInfo>& nodes) {
  std::vector<size_t> ends;
  size_t pos = 0;
  while (pos < nodes.size()) {
    const size_t rem = nodes.size() - pos;
    size_t len = rem;
    if (rem > 2) {
      len = std::min<size_t>(9, rem);
      for (size_t i = 2; i < std::min<size_t>(9, rem); ++i) {
        if (nodes[pos + i].hash.Word(3) % 4 == 0) {
          len = i + 1;
          break;
        }
      }
    }
    pos += len;
    ends.push_back(pos);
  }
  return ends;
}

TEST(MerkleSubtree, StableStartAndEndHoldUnderAnyContext) {
  std::mt19937_64 rng(42);
  size_t tested_start = 0;
  size_t tested_end = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const auto nodes = RandomChunks(rng, 15 + rng() % 60);
    if (const auto s = FindStableStart(nodes)) {
      ++tested_start;
      for (size_t k = 1; k <= 20; ++k) {
        auto combined = RandomChunks(rng, k);
        combined.insert(combined.end(), nodes.begin(), nodes.end());
        const auto ends = GroupEnds(combined);
        ASSERT_NE(std::find(ends.begin(), ends.end(), k + *s), ends.end())
            << "trial=" << trial << " prefix=" << k;
      }
    }
    if (const auto e = FindStableEnd(nodes)) {
      ++tested_end;
      for (size_t k = 1; k <= 20; ++k) {
        auto combined = nodes;
        const auto suffix = RandomChunks(rng, k);
        combined.insert(combined.end(), suffix.begin(), suffix.end());
        const auto ends = GroupEnds(combined);
        ASSERT_NE(std::find(ends.begin(), ends.end(), *e), ends.end())
            << "trial=" << trial << " suffix=" << k;
      }
    }
  }
  EXPECT_GT(tested_start, 100u);
  EXPECT_GT(tested_end, 100u);
  std::vector<ChunkInfo> two = RandomChunks(rng, 2);
  EXPECT_FALSE(FindStableStart(two));
  EXPECT_FALSE(FindStableEnd(two));
}

TEST(MerkleSubtree, JsonRoundTrip) {
  std::mt19937_64 rng(42);
  for (size_t n : {0, 1, 2, 5, 20, 100, 1000}) {
    for (auto [s, e] : {std::pair{true, true}, {true, false}, {false, true}, {false, false}}) {
      const auto chunks = RandomChunks(rng, n);
      const auto t = MerkleHashSubtree::FromChunks(s, chunks, e);
      const std::string json = t.ToJson();
      const auto back = MerkleHashSubtree::FromJson(json);
      ASSERT_TRUE(back.ok()) << back.status().ToString();
      EXPECT_EQ(*back, t) << "n=" << n;
      EXPECT_EQ(back->ToJson(), json);
      // Shape as serde writes it.
      const auto j = nlohmann::json::parse(json);
      ASSERT_EQ(j.size(), 4u);
      EXPECT_EQ(j["at_start"], s);
      EXPECT_EQ(j["at_end"], e);
      ASSERT_EQ(j["nodes"].size(), t.nodes().size());
      for (size_t i = 0; i < t.nodes().size(); ++i) {
        EXPECT_EQ(j["nodes"][i]["hash"], t.nodes()[i].hash.ToHex());
        EXPECT_EQ(j["nodes"][i]["size"], t.nodes()[i].size);
      }
      for (size_t i = 0; i < t.levels().size(); ++i) {
        EXPECT_EQ(j["levels"][i], nlohmann::json::array({t.levels()[i].left, t.levels()[i].right}));
      }
    }
  }
}

TEST(MerkleSubtree, DeserializedRunsMergeToTheRoot) {
  std::mt19937_64 rng(99);
  for (int trial = 0; trial < 50; ++trial) {
    const auto chunks = RandomChunks(rng, 50 + rng() % 100);
    const size_t s1 = 1 + rng() % 40;
    const size_t s2 = s1 + 1 + rng() % 8;
    std::vector<MerkleHashSubtree> runs;
    runs.push_back(MerkleHashSubtree::FromJson(
                       MerkleHashSubtree::FromChunks(true, Sub(chunks, 0, s1), false).ToJson())
                       .value());
    runs.push_back(MerkleHashSubtree::FromChunks(false, Sub(chunks, s1, s2), false));
    runs.push_back(
        MerkleHashSubtree::FromJson(
            MerkleHashSubtree::FromChunks(false, Sub(chunks, s2, chunks.size()), true).ToJson())
            .value());
    auto merged = MerkleHashSubtree::Merge(runs);
    ASSERT_TRUE(merged.ok());
    EXPECT_EQ(merged->Root(), MerkleRoot(chunks));
    // A merged subtree round-trips too.
    EXPECT_EQ(MerkleHashSubtree::FromJson(merged->ToJson())->Root(), MerkleRoot(chunks));
  }
}

TEST(MerkleSubtree, JsonParserIsTolerantLikeSerdeAndStrictOnShape) {
  const Hash h = SeedHash(7);
  const std::string hex = h.ToHex();
  // Field order does not matter; unknown fields are ignored; uppercase hex accepted.
  std::string upper = hex;
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  const auto ok = MerkleHashSubtree::FromJson(R"({"extra":1,"at_end":true,"levels":[[1,0]],)"
                                              R"("at_start":true,"nodes":[{"size":5,"hash":")" +
                                              upper + R"("}]})");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->Root(), h);

  const std::string node = R"({"hash":")" + hex + R"(","size":5})";
  for (
      const std::string& bad : std::vector<std::string>{
          std::string("not json"),
          std::string("[]"),
          std::string(R"({"nodes":[],"levels":[[0,0]],"at_start":true})"),
          R"({"nodes":[)" + node + R"(],"levels":[[0,0]],"at_start":true,"at_end":true})",
          R"({"nodes":[)" + node + R"(],"levels":[[1,1]],"at_start":true,"at_end":true})",
          R"({"nodes":[)" + node + R"(],"levels":[],"at_start":true,"at_end":true})",
          R"({"nodes":[)" + node + R"(],"levels":[[1]],"at_start":true,"at_end":true})",
          R"({"nodes":[)" + node + R"(],"levels":[[1,0]],"at_start":1,"at_end":true})",
          std::string(
              R"({"nodes":[{"hash":"zz","size":5}],"levels":[[1,0]],"at_start":true,"at_end":true})"),
          R"({"nodes":[{"hash":")" + hex +
              R"(","size":-5}],"levels":[[1,0]],"at_start":true,"at_end":true})",
          R"({"nodes":[{"hash":")" + hex +
              R"(","size":5.5}],"levels":[[1,0]],"at_start":true,"at_end":true})",
          R"({"nodes":[)" + node +
              R"(],"levels":[[18446744073709551615,18446744073709551615]],)"
              R"("at_start":true,"at_end":true})",
      }) {
    const auto r = MerkleHashSubtree::FromJson(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument) << bad;
    }
  }
}

}  // namespace
}  // namespace xet
