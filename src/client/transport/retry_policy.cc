#include "client/transport/retry_policy.h"

#include <algorithm>

namespace xet {

bool RetryPolicy::IsRetryableStatus(int http_status) {
  switch (http_status) {
    case 408:
    case 429:
    case 500:
    case 502:
    case 503:
    case 504:
      return true;
    default:
      return false;
  }
}

std::chrono::milliseconds RetryPolicy::Backoff(int attempt, std::mt19937_64& rng,
                                               std::chrono::milliseconds retry_after) const {
  using std::chrono::milliseconds;
  const int64_t cap = std::max<int64_t>(0, max_delay.count());
  // base * 2^(attempt-1), saturating at `cap` (no overflow for any attempt number).
  int64_t upper = std::clamp<int64_t>(base_delay.count(), 0, cap);
  for (int i = 1; i < attempt && upper > 0 && upper < cap; ++i) upper = std::min(cap, upper * 2);
  const int64_t lower = std::clamp<int64_t>(retry_after.count(), 0, cap);
  upper = std::max(upper, lower);
  std::uniform_int_distribution<int64_t> dist(lower, upper);
  return milliseconds(dist(rng));
}

}  // namespace xet
