#include "http/body_budget.h"

#include <utility>

namespace xet::server_internal {

BodyReservation::BodyReservation(BodyReservation&& other) noexcept
    : budget_(std::exchange(other.budget_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

BodyReservation& BodyReservation::operator=(BodyReservation&& other) noexcept {
  if (this != &other) {
    Reset();
    budget_ = std::exchange(other.budget_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

bool BodyReservation::GrowTo(uint64_t total) {
  if (budget_ == nullptr) return false;
  if (total <= bytes_) return true;
  if (!budget_->Add(total - bytes_)) return false;
  bytes_ = total;
  return true;
}

void BodyReservation::Reset() {
  if (budget_ != nullptr) budget_->Sub(bytes_);
  budget_ = nullptr;
  bytes_ = 0;
}

BodyBudget::BodyBudget(uint64_t limit, Gauge* reserved_gauge)
    : limit_(limit), gauge_(reserved_gauge) {}

std::optional<BodyReservation> BodyBudget::Reserve(uint64_t bytes) {
  if (!Add(bytes)) return std::nullopt;
  return BodyReservation(this, bytes);
}

std::optional<BodyBudget::Clock::time_point> BodyBudget::IdleFrom() const {
  if (reserved() != 0) return std::nullopt;
  return Clock::time_point(Clock::duration(idle_from_.load(std::memory_order_relaxed)));
}

bool BodyBudget::Add(uint64_t bytes) {
  if (bytes == 0) return true;
  uint64_t current = reserved_.load(std::memory_order_relaxed);
  do {
    if (limit_ != 0 && (bytes > limit_ || current > limit_ - bytes)) return false;
  } while (!reserved_.compare_exchange_weak(current, current + bytes, std::memory_order_relaxed));
  if (gauge_ != nullptr) gauge_->Add(static_cast<int64_t>(bytes));
  return true;
}

void BodyBudget::Sub(uint64_t bytes) {
  if (bytes == 0) return;
  if (gauge_ != nullptr) gauge_->Add(-static_cast<int64_t>(bytes));
  if (reserved_.fetch_sub(bytes, std::memory_order_relaxed) == bytes) {
    idle_from_.store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed);
  }
}

}  // namespace xet::server_internal
