// AdaptiveLimit: how many xorb uploads may be in flight, adapted by AIMD (additive
// increase, multiplicative decrease) between 1 and a maximum. Thread-safe.
//
// Signals: a failed request (after HttpClient's own retries) halves the limit; a request
// whose time per MiB exceeds kAimdSlowFactor × the best seen recently (the queue is
// building up somewhere: server, disk or network) cuts it by a quarter; any other success
// adds 1/limit (one step per round of requests), up to the maximum. The best time decays
// by 1 % per sample so the reference follows a changing network.
#pragma once

#include <cstddef>

#include "common/mutex.h"

namespace xet {

inline constexpr double kAimdSlowFactor = 2.0;

class AdaptiveLimit {
 public:
  AdaptiveLimit(size_t max, size_t initial);

  // Blocks until a slot is free under the current limit; false once Cancel was called.
  bool Acquire();
  // Frees a slot and adapts the limit to the request's outcome.
  void Release(bool ok, double seconds, double mib);
  // Wakes every waiter; Acquire returns false from now on.
  void Cancel();

  size_t limit() const;
  size_t in_flight() const;

 private:
  // Whether Acquire may return: cancelled, or a slot is free under the limit.
  bool CanReturnLocked() const REQUIRES(mu_);

  const size_t max_;
  mutable Mutex mu_;
  CondVar cv_;
  double limit_ GUARDED_BY(mu_);
  size_t in_flight_ GUARDED_BY(mu_) = 0;
  double best_ GUARDED_BY(mu_) = 0;  // best seconds per MiB seen (decaying); 0 = none yet
  bool cancelled_ GUARDED_BY(mu_) = false;
};

}  // namespace xet
