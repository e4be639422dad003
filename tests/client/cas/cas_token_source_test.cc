#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "client/cas/cas_client.h"

namespace xet {
namespace {

// A token source over a fake clock and a counting fetcher.
struct Fixture {
  int64_t now = 1000;
  int fetches = 0;
  int64_t lifetime = 600;
  std::unique_ptr<CasTokenSource> source = MakeCachingTokenSource(
      [this]() -> Result<XetToken> {
        ++fetches;
        return XetToken{"tok" + std::to_string(fetches), "http://cas", now + lifetime};
      },
      /*refresh_margin_s=*/60, [this] { return now; });
};

TEST(CasTokenSourceTest, CachesUntilTheRefreshMargin) {
  Fixture f;
  auto t = f.source->Token();
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->access_token, "tok1");
  EXPECT_EQ(t->expires_at, 1600);
  f.now = 1539;  // 61 s left: still good
  EXPECT_EQ(f.source->Token()->access_token, "tok1");
  EXPECT_EQ(f.fetches, 1);
  f.now = 1540;  // 60 s left: refresh
  EXPECT_EQ(f.source->Token()->access_token, "tok2");
  EXPECT_EQ(f.fetches, 2);
  EXPECT_EQ(f.source->Token()->access_token, "tok2");
  EXPECT_EQ(f.fetches, 2);
}

TEST(CasTokenSourceTest, InvalidateForcesAFetch) {
  Fixture f;
  EXPECT_EQ(f.source->Token()->access_token, "tok1");
  f.source->Invalidate();
  EXPECT_EQ(f.source->Token()->access_token, "tok2");
  EXPECT_EQ(f.source->Token()->access_token, "tok2");
}

TEST(CasTokenSourceTest, ShortLivedTokensAreStillReused) {
  Fixture f;
  f.lifetime = 30;  // shorter than the 60 s margin: the margin becomes 15 s
  EXPECT_EQ(f.source->Token()->access_token, "tok1");
  f.now += 14;
  EXPECT_EQ(f.source->Token()->access_token, "tok1");
  f.now += 1;
  EXPECT_EQ(f.source->Token()->access_token, "tok2");
}

TEST(CasTokenSourceTest, ExpiredTokensAndFetchErrors) {
  int64_t now = 0;
  int calls = 0;
  auto source = MakeCachingTokenSource(
      [&]() -> Result<XetToken> {
        if (++calls == 2) return Status::Unavailable("hub down");
        return XetToken{"t" + std::to_string(calls), "http://cas", now + 100};
      },
      60, [&] { return now; });
  EXPECT_EQ(source->Token()->access_token, "t1");
  now = 1000;  // long expired
  EXPECT_EQ(source->Token().status().code(), Status::Code::kUnavailable);
  EXPECT_EQ(source->Token()->access_token, "t3");  // the error is not cached
}

TEST(CasTokenSourceTest, ConcurrentCallersShareOneFetch) {
  std::atomic<int> fetches = 0;
  auto source = MakeCachingTokenSource([&]() -> Result<XetToken> {
    ++fetches;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return XetToken{"t", "http://cas", INT64_MAX / 2};
  });
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] { EXPECT_TRUE(source->Token().ok()); });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(fetches.load(), 1);
}

TEST(CasTokenSourceTest, StaticSourceNeverChanges) {
  auto source = MakeStaticTokenSource(XetToken{"hf_x", "http://h:1/", 0});
  EXPECT_EQ(source->Token()->cas_url, "http://h:1");
  source->Invalidate();
  EXPECT_EQ(source->Token()->access_token, "hf_x");
}

}  // namespace
}  // namespace xet
