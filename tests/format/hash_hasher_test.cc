// HashHasher: the hash-table hash of content hashes, which uploaders choose and could grind.
#include <gtest/gtest.h>

#include <cstring>
#include <unordered_set>

#include "format/hash.h"

namespace xet {
namespace {

// Hashes alike in their first 8 bytes (what a table hash of the first word alone would
// use), different in the rest.
Hash SameFirstWord(uint64_t n) {
  Hash h;
  const uint64_t w[4] = {0x1234567890abcdefull, n, n * 3, ~n};
  std::memcpy(h.mutable_data(), w, sizeof(w));
  return h;
}

TEST(HashHasher, EqualHashesHashEqual) {
  const Hash a = SameFirstWord(7), b = SameFirstWord(7);
  EXPECT_EQ(HashHasher{}(a), HashHasher{}(b));
  EXPECT_EQ(std::hash<Hash>{}(a), HashHasher{}(a));
}

TEST(HashHasher, EveryWordCountsSoGroundHashesSpreadOverTheBuckets) {
  std::unordered_set<Hash, HashHasher> set;
  std::unordered_set<size_t> values;
  constexpr uint64_t kCount = 100000;
  for (uint64_t n = 0; n < kCount; ++n) {
    set.insert(SameFirstWord(n));
    values.insert(HashHasher{}(SameFirstWord(n)));
  }
  EXPECT_GE(values.size(), kCount - 2);  // 64-bit values: a collision is a 1-in-10^9 event
  size_t longest = 0;
  for (size_t b = 0; b < set.bucket_count(); ++b) longest = std::max(longest, set.bucket_size(b));
  // A hash of the first word alone puts all 100,000 in one bucket.
  EXPECT_LE(longest, 32u);
}

}  // namespace
}  // namespace xet
