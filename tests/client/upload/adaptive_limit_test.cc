#include "client/upload/adaptive_limit.h"

#include <gtest/gtest.h>

#include <thread>

namespace xet {
namespace {

TEST(AdaptiveLimitTest, GrowsAdditivelyUpToTheMaximum) {
  AdaptiveLimit l(4, 1);
  EXPECT_EQ(l.limit(), 1u);
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(l.Acquire());
    l.Release(true, 0.1, 1.0);
  }
  EXPECT_EQ(l.limit(), 4u);
}

TEST(AdaptiveLimitTest, ErrorsHalveAndSlownessCuts) {
  AdaptiveLimit l(8, 8);
  ASSERT_TRUE(l.Acquire());
  l.Release(false, 0, 0);
  EXPECT_EQ(l.limit(), 4u);
  ASSERT_TRUE(l.Acquire());
  l.Release(true, 0.1, 1.0);  // sets the reference
  ASSERT_TRUE(l.Acquire());
  l.Release(true, 1.0, 1.0);  // 10x slower per MiB
  EXPECT_EQ(l.limit(), 3u);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(l.Acquire());
    l.Release(false, 0, 0);
  }
  EXPECT_EQ(l.limit(), 1u);  // never below one
}

TEST(AdaptiveLimitTest, AcquireBlocksAtTheLimitAndCancelWakes) {
  AdaptiveLimit l(1, 1);
  ASSERT_TRUE(l.Acquire());
  bool got = true;
  std::thread t([&] { got = l.Acquire(); });
  l.Cancel();
  t.join();
  EXPECT_FALSE(got);
  EXPECT_EQ(l.in_flight(), 1u);
}

}  // namespace
}  // namespace xet
