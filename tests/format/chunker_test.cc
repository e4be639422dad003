// The optimized, streaming chunker against the spec's byte-at-a-time loop.
#include "format/chunker.h"

#include <gtest/gtest.h>

#include <random>

#include "support/reference_chunker.h"
#include "support/test_support.h"

namespace xet {
namespace {

using testing::ReferenceChunkBoundaries;

// Feeds `data` to a Chunker in blocks whose sizes come from `next_block`.
template <typename F>
std::vector<uint64_t> StreamBoundaries(std::span<const uint8_t> data, F next_block) {
  Chunker chunker;
  std::vector<uint64_t> ends;
  uint64_t consumed = 0;  // stream offset of the start of the current block remainder
  size_t pos = 0;
  while (pos < data.size()) {
    const size_t block = std::min(next_block(), data.size() - pos);
    std::span<const uint8_t> rest = data.subspan(pos, block);
    while (!rest.empty()) {
      const size_t n = chunker.NextBoundary(rest);
      if (n == 0) {
        consumed += rest.size();
        break;
      }
      consumed += n;
      ends.push_back(consumed);
      rest = rest.subspan(n);
    }
    pos += block;
  }
  if (chunker.Finish() > 0) ends.push_back(consumed);
  return ends;
}

// Data with frequent boundaries: a short repeating pattern with many mask hits mixed in.
std::vector<uint8_t> MixedData(size_t n, uint64_t seed) {
  auto data = testing::RandomBytes(n, seed);
  const auto text = testing::TextLikeBytes(n, seed);
  for (size_t i = 0; i < n; i += 50000) {  // alternate random, text and constant runs
    const size_t end = std::min(n, i + 20000);
    for (size_t k = i; k < end; ++k) data[k] = (i / 50000) % 2 ? text[k] : 7;
  }
  return data;
}

TEST(Chunker, MatchesReferenceOnVariedData) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    for (const auto& data : {testing::RandomBytes(3'000'000, seed),
                             testing::TextLikeBytes(3'000'000, seed), MixedData(3'000'000, seed)}) {
      const auto expected = ReferenceChunkBoundaries(data);
      ASSERT_FALSE(expected.empty());
      EXPECT_EQ(ChunkBoundaries(data), expected) << "seed " << seed;
    }
  }
}

TEST(Chunker, StreamingInAnyBlockSizesGivesSameBoundaries) {
  const auto data = MixedData(2'000'000, 9);
  const auto expected = ReferenceChunkBoundaries(data);
  for (size_t fixed : {1ul, 7ul, 63ul, 64ul, 65ul, 4095ul, 8191ul, 8192ul, 65536ul, 131073ul}) {
    if (fixed < 64 && data.size() > 300'000) {
      // Tiny blocks are slow; check them on a prefix.
      std::span<const uint8_t> prefix(data.data(), 300'000);
      EXPECT_EQ(StreamBoundaries(prefix, [&] { return fixed; }), ReferenceChunkBoundaries(prefix))
          << "block " << fixed;
      continue;
    }
    EXPECT_EQ(StreamBoundaries(data, [&] { return fixed; }), expected) << "block " << fixed;
  }
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 5; ++trial) {
    EXPECT_EQ(StreamBoundaries(data, [&] { return 1 + rng() % 200'000; }), expected);
  }
}

TEST(Chunker, EdgeSizes) {
  EXPECT_TRUE(ChunkBoundaries({}).empty());
  for (size_t n : {1ul, 100ul, 8191ul, 8192ul, 8193ul, 131071ul, 131072ul, 131073ul, 262144ul}) {
    const std::vector<uint8_t> zeros(n, 0);
    EXPECT_EQ(ChunkBoundaries(zeros), ReferenceChunkBoundaries(zeros)) << n;
    const auto rnd = testing::RandomBytes(n, n);
    EXPECT_EQ(ChunkBoundaries(rnd), ReferenceChunkBoundaries(rnd)) << n;
  }
}

TEST(Chunker, ChunkSizesStayWithinLimits) {
  const auto data = MixedData(4'000'000, 11);
  uint64_t prev = 0;
  const auto ends = ChunkBoundaries(data);
  for (size_t i = 0; i < ends.size(); ++i) {
    const uint64_t size = ends[i] - prev;
    EXPECT_LE(size, kMaxChunkSize);
    if (i + 1 < ends.size()) {
      EXPECT_GE(size, kMinChunkSize);
    }
    prev = ends[i];
  }
  EXPECT_EQ(prev, data.size());
}

}  // namespace
}  // namespace xet

namespace xet {
namespace {

// FindGearHit works eight bytes per round; every hit position within a round, every
// tail length and every starting state must give what one step per byte gives.
TEST(Chunker, GearScanMatchesOneStepPerByteAtEveryRoundOffset) {
  const std::vector<uint8_t> data = testing::RandomBytes(6 << 20, 77);
  std::mt19937_64 rng(5);
  size_t hits_at[8] = {};
  size_t pos = 0;
  uint64_t h = rng();
  while (pos < data.size()) {
    const size_t end = std::min(data.size(), pos + 1 + rng() % 300000);
    uint64_t expected_h = h;
    size_t expected = end;
    for (size_t p = pos; p < end; ++p) {
      expected_h = (expected_h << 1) + kGearTable[data[p]];
      if ((expected_h & kChunkBoundaryMask) == 0) {
        expected = p;
        break;
      }
    }
    uint64_t got_h = h;
    const size_t got = internal::FindGearHit(data.data(), pos, end, &got_h);
    ASSERT_EQ(got, expected) << "scan from " << pos << " to " << end;
    ASSERT_EQ(got_h, expected_h) << "state after " << got;
    if (got < end) ++hits_at[(got - pos) % 8];
    pos = got + 1;
    h = got_h;
  }
  for (size_t k = 0; k < 8; ++k) EXPECT_GT(hits_at[k], 0u) << "no hit at round offset " << k;
}

}  // namespace
}  // namespace xet

namespace xet {
namespace {

// EndsOnChunkerCut accepts exactly the ends the chunker cuts at: every chunk but a
// stream's last (which ends where the stream does), and a chunk cut at the maximum size.
TEST(Chunker, EndsOnChunkerCutTellsCutEndsFromStreamEnds) {
  const auto data = testing::RandomBytes(3 << 20, 8);
  const auto ends = testing::ReferenceChunkBoundaries(data);
  ASSERT_GT(ends.size(), 10u);
  uint64_t start = 0;
  for (size_t i = 0; i + 1 < ends.size(); ++i) {
    EXPECT_TRUE(EndsOnChunkerCut({data.data() + start, ends[i] - start})) << i;
    start = ends[i];
  }
  // Cut one byte short or long of a true cut: no cut there (random data).
  EXPECT_FALSE(EndsOnChunkerCut({data.data(), ends[0] - 1}));
  EXPECT_FALSE(EndsOnChunkerCut({data.data(), ends[0] + 1}));
  // Outside [min, max] never; exactly max always.
  EXPECT_FALSE(EndsOnChunkerCut({data.data(), kMinChunkSize - 1}));
  EXPECT_FALSE(EndsOnChunkerCut({data.data(), kMaxChunkSize + 1}));
  const std::vector<uint8_t> zeros(kMaxChunkSize, 0);  // no hit anywhere: a forced cut
  EXPECT_EQ(testing::ReferenceChunkBoundaries(zeros).front(), kMaxChunkSize);
  EXPECT_TRUE(EndsOnChunkerCut(zeros));
  EXPECT_FALSE(EndsOnChunkerCut({zeros.data(), kMaxChunkSize - 1}));
}

}  // namespace
}  // namespace xet
