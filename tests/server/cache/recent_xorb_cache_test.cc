#include "server/cache/recent_xorb_cache.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace xet {
namespace {

constexpr size_t kMiB = 1 << 20;

Hash H(uint8_t n) {
  std::array<uint8_t, Hash::kSize> raw{};
  raw[0] = n;
  raw[31] = static_cast<uint8_t>(~n);
  return Hash::FromArray(raw);
}

// `size` bytes that differ per `seed`.
std::vector<uint8_t> Bytes(size_t size, uint8_t seed) {
  std::vector<uint8_t> v(size);
  for (size_t i = 0; i < size; ++i) v[i] = static_cast<uint8_t>(seed * 31 + i * 7);
  return v;
}

std::string AsString(const std::vector<uint8_t>& v) { return std::string(v.begin(), v.end()); }

TEST(RecentXorbCacheTest, FindReturnsACopyOfWhatWasInserted) {
  RecentXorbCache cache(64 * kMiB);
  auto data = Bytes(3 * kMiB + 5, 1);
  cache.Insert(H(1), data);
  const std::string expected = AsString(data);
  data.assign(data.size(), 0);  // the cache holds its own copy
  auto got = cache.Find(H(1));
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(*got, expected);
  EXPECT_EQ(cache.Find(H(2)), nullptr);
  EXPECT_EQ(cache.bytes(), expected.size());
  EXPECT_EQ(cache.entries(), 1u);
}

TEST(RecentXorbCacheTest, DisabledEmptyAndOversizedDataAreNotKept) {
  RecentXorbCache off(0);
  off.Insert(H(1), Bytes(100, 1));
  EXPECT_EQ(off.Find(H(1)), nullptr);
  EXPECT_EQ(off.owned_bytes(), 0u);

  RecentXorbCache cache(16 * kMiB);
  cache.Insert(H(2), {});
  cache.Insert(H(3), Bytes(8 * kMiB + 1, 3));  // over half the capacity
  EXPECT_EQ(cache.Find(H(2)), nullptr);
  EXPECT_EQ(cache.Find(H(3)), nullptr);
  cache.Insert(H(4), Bytes(8 * kMiB, 4));  // exactly half: kept
  EXPECT_NE(cache.Find(H(4)), nullptr);
}

// Buffers are sized in 4 MiB steps, but never beyond the capacity: a 2 MiB cache still
// keeps a 1 MiB xorb.
TEST(RecentXorbCacheTest, ACacheSmallerThanOneStepStillKeepsSmallXorbs) {
  RecentXorbCache cache(2 * kMiB);
  cache.Insert(H(1), Bytes(kMiB, 1));
  auto got = cache.Find(H(1));
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(*got, AsString(Bytes(kMiB, 1)));
  EXPECT_LE(cache.owned_bytes(), 2 * kMiB);
  cache.Insert(H(2), Bytes(kMiB, 2));  // the one buffer is reused
  EXPECT_EQ(cache.Find(H(1)), nullptr);
  ASSERT_NE(cache.Find(H(2)), nullptr);
  EXPECT_EQ(*cache.Find(H(2)), AsString(Bytes(kMiB, 2)));
}

TEST(RecentXorbCacheTest, ASecondInsertOfTheSameHashKeepsTheFirst) {
  RecentXorbCache cache(64 * kMiB);
  cache.Insert(H(1), Bytes(1000, 1));
  cache.Insert(H(1), Bytes(2000, 2));
  EXPECT_EQ(*cache.Find(H(1)), AsString(Bytes(1000, 1)));
  EXPECT_EQ(cache.bytes(), 1000u);
}

TEST(RecentXorbCacheTest, EvictsLeastRecentlyUsedAndStaysWithinCapacity) {
  // Buffers are sized in 4 MiB steps: 16 MiB hold four 3 MiB entries.
  RecentXorbCache cache(16 * kMiB);
  for (uint8_t i = 1; i <= 4; ++i) cache.Insert(H(i), Bytes(3 * kMiB, i));
  EXPECT_EQ(cache.entries(), 4u);
  ASSERT_NE(cache.Find(H(1)), nullptr);  // 1 is now the most recently used
  cache.Insert(H(5), Bytes(3 * kMiB, 5));
  EXPECT_EQ(cache.Find(H(2)), nullptr);  // the least recently used went
  for (uint8_t i : {uint8_t{1}, uint8_t{3}, uint8_t{4}, uint8_t{5}}) {
    auto got = cache.Find(H(i));
    ASSERT_NE(got, nullptr) << int(i);
    EXPECT_EQ(*got, AsString(Bytes(3 * kMiB, i))) << int(i);
  }
  EXPECT_LE(cache.owned_bytes(), 16 * kMiB);
}

TEST(RecentXorbCacheTest, EvictedBuffersAreReusedNotReallocated) {
  RecentXorbCache cache(16 * kMiB);
  for (uint8_t i = 1; i <= 4; ++i) cache.Insert(H(i), Bytes(3 * kMiB, i));
  const char* first = cache.Find(H(1))->data();
  // A slightly larger xorb still fits the 4 MiB buffer H(1) leaves behind.
  cache.Find(H(2));
  cache.Find(H(3));
  cache.Find(H(4));
  cache.Insert(H(5), Bytes(3 * kMiB + 1000, 5));
  EXPECT_EQ(cache.Find(H(1)), nullptr);
  auto fifth = cache.Find(H(5));
  ASSERT_NE(fifth, nullptr);
  EXPECT_EQ(fifth->data(), first);
  EXPECT_EQ(*fifth, AsString(Bytes(3 * kMiB + 1000, 5)));
  EXPECT_EQ(cache.owned_bytes(), 16 * kMiB);
}

TEST(RecentXorbCacheTest, AnEntryHeldByAReaderIsNeverOverwritten) {
  RecentXorbCache cache(8 * kMiB);
  cache.Insert(H(1), Bytes(3 * kMiB, 1));
  cache.Insert(H(2), Bytes(3 * kMiB, 2));
  auto held = cache.Find(H(1));  // an answer still sending it
  cache.Find(H(2));
  for (uint8_t i = 3; i <= 8; ++i) cache.Insert(H(i), Bytes(3 * kMiB, i));
  EXPECT_EQ(cache.Find(H(1)), nullptr);
  EXPECT_EQ(*held, AsString(Bytes(3 * kMiB, 1)));  // evicted, but its bytes are intact
  EXPECT_LE(cache.owned_bytes(), 8 * kMiB);
}

TEST(RecentXorbCacheTest, BuffersTooSmallForANewXorbAreReleased) {
  RecentXorbCache cache(16 * kMiB);
  for (uint8_t i = 1; i <= 4; ++i) cache.Insert(H(i), Bytes(3 * kMiB, i));
  cache.Insert(H(5), Bytes(8 * kMiB, 5));  // needs two 4 MiB buffers' room
  auto got = cache.Find(H(5));
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(*got, AsString(Bytes(8 * kMiB, 5)));
  // The two least recently used went, their 4 MiB buffers released for an 8 MiB one.
  EXPECT_EQ(cache.Find(H(1)), nullptr);
  EXPECT_EQ(cache.Find(H(2)), nullptr);
  EXPECT_NE(cache.Find(H(3)), nullptr);
  EXPECT_NE(cache.Find(H(4)), nullptr);
  EXPECT_EQ(cache.entries(), 3u);
  EXPECT_EQ(cache.owned_bytes(), 16 * kMiB);
}

TEST(RecentXorbCacheTest, ConcurrentInsertsAndFindsSeeWholeEntries) {
  RecentXorbCache cache(32 * kMiB);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cache, t] {
      for (int round = 0; round < 50; ++round) {
        const auto n = static_cast<uint8_t>((round * 4 + t) % 24);
        cache.Insert(H(n), Bytes(kMiB + n, n));
        if (auto got = cache.Find(H(static_cast<uint8_t>((n + 5) % 24)))) {
          const auto m = static_cast<uint8_t>((n + 5) % 24);
          EXPECT_EQ(*got, AsString(Bytes(kMiB + m, m)));
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_LE(cache.owned_bytes(), 32 * kMiB);
}

}  // namespace
}  // namespace xet
