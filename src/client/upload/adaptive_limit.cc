#include "client/upload/adaptive_limit.h"

#include <algorithm>

namespace xet {

AdaptiveLimit::AdaptiveLimit(size_t max, size_t initial)
    : max_(std::max<size_t>(1, max)),
      limit_(static_cast<double>(std::clamp<size_t>(initial, 1, std::max<size_t>(1, max)))) {}

bool AdaptiveLimit::Acquire() {
  MutexLock lock(mu_);
  while (!CanReturnLocked()) cv_.Wait(mu_);
  if (cancelled_) return false;
  ++in_flight_;
  return true;
}

bool AdaptiveLimit::CanReturnLocked() const {
  return cancelled_ || static_cast<double>(in_flight_) < limit_ - 1e-9 || in_flight_ == 0;
}

void AdaptiveLimit::Release(bool ok, double seconds, double mib) {
  MutexLock lock(mu_);
  if (in_flight_ > 0) --in_flight_;
  const double maxd = static_cast<double>(max_);
  if (!ok) {
    limit_ = std::max(1.0, limit_ / 2);
  } else {
    const double per_mib = seconds / std::max(mib, 1.0 / 1024);
    if (best_ > 0) best_ *= 1.01;
    if (best_ == 0 || per_mib < best_) best_ = per_mib;
    if (per_mib > kAimdSlowFactor * best_) {
      limit_ = std::max(1.0, limit_ * 0.75);
    } else {
      limit_ = std::min(maxd, limit_ + 1.0 / limit_);
    }
  }
  cv_.NotifyAll();
}

void AdaptiveLimit::Cancel() {
  MutexLock lock(mu_);
  cancelled_ = true;
  cv_.NotifyAll();
}

size_t AdaptiveLimit::limit() const {
  MutexLock lock(mu_);
  return static_cast<size_t>(limit_ + 1e-9);
}

size_t AdaptiveLimit::in_flight() const {
  MutexLock lock(mu_);
  return in_flight_;
}

}  // namespace xet
