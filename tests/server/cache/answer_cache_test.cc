#include "server/cache/answer_cache.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace xet {
namespace {

std::shared_ptr<const CachedAnswer> Answer(size_t bytes, int64_t expires_at) {
  auto a = std::make_shared<CachedAnswer>();
  a->pieces = {std::string(bytes / 2, 'a'), std::string(bytes - bytes / 2, 'b')};
  a->bytes = bytes;
  a->urls_expire_at = expires_at;
  return a;
}

TEST(AnswerCacheTest, ReturnsWhatWasPutWhileUrlsLiveLongEnough) {
  AnswerCache cache(1000, /*min_url_lifetime_s=*/60);
  auto a = Answer(100, /*expires_at=*/1000);
  cache.Put("k", a);
  EXPECT_EQ(cache.Get("k", 900), a);  // 100 s left
  EXPECT_EQ(cache.Get("k", 940), a);  // exactly 60 s left
  EXPECT_EQ(cache.Get("other", 900), nullptr);
}

TEST(AnswerCacheTest, DropsAnEntryWhoseUrlsAreTooCloseToExpiry) {
  AnswerCache cache(1000, 60);
  cache.Put("k", Answer(100, 1000));
  EXPECT_EQ(cache.Get("k", 941), nullptr);
  EXPECT_EQ(cache.bytes(), 0u);
  EXPECT_EQ(cache.Get("k", 0), nullptr);  // gone, not just hidden
}

TEST(AnswerCacheTest, EvictsLeastRecentlyUsedToStayWithinCapacity) {
  AnswerCache cache(1000, 0);
  cache.Put("a", Answer(250, 100));
  cache.Put("b", Answer(250, 100));
  cache.Put("c", Answer(250, 100));
  cache.Put("d", Answer(250, 100));
  ASSERT_NE(cache.Get("a", 0), nullptr);  // a is now the most recent
  cache.Put("e", Answer(250, 100));       // over capacity: b goes
  EXPECT_EQ(cache.Get("b", 0), nullptr);
  EXPECT_NE(cache.Get("a", 0), nullptr);
  EXPECT_NE(cache.Get("e", 0), nullptr);
  EXPECT_EQ(cache.bytes(), 1000u);
}

TEST(AnswerCacheTest, KeepsNothingLargerThanAQuarterOfItsCapacity) {
  AnswerCache cache(1000, 0);
  cache.Put("big", Answer(251, 100));
  EXPECT_EQ(cache.Get("big", 0), nullptr);
  EXPECT_EQ(cache.bytes(), 0u);
}

TEST(AnswerCacheTest, ZeroCapacityKeepsNothing) {
  AnswerCache cache(0, 0);
  cache.Put("k", Answer(1, 100));
  EXPECT_EQ(cache.Get("k", 0), nullptr);
}

TEST(AnswerCacheTest, ReplacingAKeyAccountsForTheNewSizeOnly) {
  AnswerCache cache(1000, 0);
  cache.Put("k", Answer(200, 100));
  auto b = Answer(100, 100);
  cache.Put("k", b);
  EXPECT_EQ(cache.bytes(), 100u);
  EXPECT_EQ(cache.Get("k", 0), b);
}

TEST(AnswerCacheTest, ClearDropsEverything) {
  AnswerCache cache(1000, 0);
  cache.Put("k", Answer(100, 100));
  cache.Clear();
  EXPECT_EQ(cache.Get("k", 0), nullptr);
  EXPECT_EQ(cache.bytes(), 0u);
}

}  // namespace
}  // namespace xet
