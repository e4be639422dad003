// VisibleXorbCache: answers keyed by the xorb and the exact scope list, bounded by its
// entry count (least recently used out first), off at 0.
#include "server/cache/visible_xorb_cache.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace xet {
namespace {

Hash H(uint64_t n) {
  Hash h;
  const uint64_t w[4] = {n, n * 0x9E3779B97F4A7C15ULL, ~n, n + 7};
  std::memcpy(h.mutable_data(), w, 32);
  return h;
}

TEST(VisibleXorbCache, RemembersAnAnswerForTheSameXorbAndScopes) {
  VisibleXorbCache cache(16);
  const std::vector<Scope> team = {"ns/team"};
  EXPECT_FALSE(cache.Contains(H(1), team));
  cache.Insert(H(1), team);
  EXPECT_TRUE(cache.Contains(H(1), team));
  EXPECT_FALSE(cache.Contains(H(2), team));
  EXPECT_EQ(cache.size(), 1u);
}

TEST(VisibleXorbCache, OtherScopeListsAreOtherQuestions) {
  VisibleXorbCache cache(16);
  cache.Insert(H(1), std::vector<Scope>{"a", "b"});
  EXPECT_TRUE(cache.Contains(H(1), std::vector<Scope>{"a", "b"}));
  EXPECT_FALSE(cache.Contains(H(1), std::vector<Scope>{"a"}));
  EXPECT_FALSE(cache.Contains(H(1), std::vector<Scope>{"b", "a"}));
  // Scopes are separated, not concatenated.
  EXPECT_FALSE(cache.Contains(H(1), std::vector<Scope>{"ab"}));
  EXPECT_FALSE(cache.Contains(H(1), std::vector<Scope>{}));
}

TEST(VisibleXorbCache, EvictsTheLeastRecentlyUsedBeyondItsEntries) {
  VisibleXorbCache cache(2);
  const std::vector<Scope> s = {"s"};
  cache.Insert(H(1), s);
  cache.Insert(H(2), s);
  EXPECT_TRUE(cache.Contains(H(1), s));  // now more recent than H(2)
  cache.Insert(H(3), s);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_TRUE(cache.Contains(H(1), s));
  EXPECT_FALSE(cache.Contains(H(2), s));
  EXPECT_TRUE(cache.Contains(H(3), s));
}

TEST(VisibleXorbCache, ZeroEntriesKeepsNothing) {
  VisibleXorbCache cache(0);
  cache.Insert(H(1), std::vector<Scope>{"s"});
  EXPECT_FALSE(cache.Contains(H(1), std::vector<Scope>{"s"}));
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
}  // namespace xet
