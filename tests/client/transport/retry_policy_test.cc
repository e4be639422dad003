#include "client/transport/retry_policy.h"

#include <gtest/gtest.h>

namespace xet {
namespace {

using std::chrono::milliseconds;

TEST(RetryPolicyTest, RetryableClasses) {
  for (int s : {408, 429, 500, 502, 503, 504}) EXPECT_TRUE(RetryPolicy::IsRetryableStatus(s)) << s;
  for (int s : {200, 206, 301, 304, 400, 401, 403, 404, 409, 411, 413, 416, 422, 431, 501, 505}) {
    EXPECT_FALSE(RetryPolicy::IsRetryableStatus(s)) << s;
  }
}

TEST(RetryPolicyTest, BackoffStaysWithinTheExponentialBound) {
  RetryPolicy p;
  p.base_delay = milliseconds(100);
  p.max_delay = milliseconds(1000);
  std::mt19937_64 rng(7);
  for (int attempt = 1; attempt <= 40; ++attempt) {
    const int64_t bound = std::min<int64_t>(1000, 100LL << std::min(attempt - 1, 20));
    int64_t lo = INT64_MAX, hi = 0;
    for (int i = 0; i < 2000; ++i) {
      const int64_t d = p.Backoff(attempt, rng).count();
      ASSERT_GE(d, 0);
      ASSERT_LE(d, bound) << "attempt " << attempt;
      lo = std::min(lo, d);
      hi = std::max(hi, d);
    }
    // Full jitter: the draws spread over the whole interval.
    EXPECT_LT(lo, bound / 10 + 1) << "attempt " << attempt;
    EXPECT_GT(hi, bound * 9 / 10) << "attempt " << attempt;
  }
}

TEST(RetryPolicyTest, HugeAttemptNumbersDoNotOverflow) {
  RetryPolicy p;
  std::mt19937_64 rng(1);
  for (int attempt : {63, 64, 65, 1000, 1 << 30}) {
    const auto d = p.Backoff(attempt, rng);
    EXPECT_GE(d.count(), 0);
    EXPECT_LE(d, p.max_delay);
  }
  p.base_delay = milliseconds(0);
  EXPECT_EQ(p.Backoff(1 << 30, rng).count(), 0);
}

TEST(RetryPolicyTest, RetryAfterRaisesTheLowerBoundButNotPastTheCap) {
  RetryPolicy p;
  p.base_delay = milliseconds(10);
  p.max_delay = milliseconds(500);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 500; ++i) {
    const auto d = p.Backoff(1, rng, milliseconds(200));
    EXPECT_GE(d.count(), 200);
    EXPECT_LE(d.count(), 200);  // bound 10 < 200: exactly the server's wait
  }
  for (int i = 0; i < 500; ++i) {
    const auto d = p.Backoff(10, rng, milliseconds(200));  // bound 500
    EXPECT_GE(d.count(), 200);
    EXPECT_LE(d.count(), 500);
  }
  // A server asking for an hour gets max_delay.
  EXPECT_EQ(p.Backoff(1, rng, milliseconds(3'600'000)).count(), 500);
}

}  // namespace
}  // namespace xet
