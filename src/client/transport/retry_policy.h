// When and how long to wait before retrying a failed request: exponential backoff with
// full jitter, on the retryable failure classes only.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>

namespace xet {

struct RetryPolicy {
  int max_attempts = 6;  // total attempts, the first included
  std::chrono::milliseconds base_delay{250};
  std::chrono::milliseconds max_delay{8000};

  // Retryable: transport failures (connection refused/reset, timeouts) and HTTP 408, 429,
  // 500, 502, 503, 504. Never retried: every other 4xx (the request itself is wrong) and
  // 501.
  static bool IsRetryableStatus(int http_status);

  // The wait before attempt `attempt` (1 = the first retry): uniform in
  // [0, min(max_delay, base_delay * 2^(attempt-1))]; `retry_after` (a server's Retry-After,
  // if any) raises the lower bound, capped at max_delay (and the upper bound with it), so a
  // wait never exceeds max_delay.
  std::chrono::milliseconds Backoff(int attempt, std::mt19937_64& rng,
                                    std::chrono::milliseconds retry_after = {}) const;
};

}  // namespace xet
