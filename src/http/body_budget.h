// BodyBudget: the request-body bytes the server holds at once, shared by every connection.
//
// Each request body reserves its bytes before the first one is read (its declared
// Content-Length; a chunked body as it grows), and gives them back once its handler is done
// with them. A reservation that would take the total past the limit is refused, so the
// memory held by bodies in flight stays bounded whatever the clients declare. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>

#include "http/metrics.h"

namespace xet::server_internal {

class BodyBudget;

// Bytes held against a BodyBudget, given back when the reservation is destroyed or Reset().
// Move-only; an empty (default-constructed) reservation holds nothing.
class BodyReservation {
 public:
  BodyReservation() = default;
  ~BodyReservation() { Reset(); }
  BodyReservation(BodyReservation&& other) noexcept;
  BodyReservation& operator=(BodyReservation&& other) noexcept;
  BodyReservation(const BodyReservation&) = delete;
  BodyReservation& operator=(const BodyReservation&) = delete;

  // Raises the reservation to `total` bytes (nothing when it already holds as many). False,
  // holding what it held, when the budget cannot take the difference (or when empty).
  bool GrowTo(uint64_t total);
  // Gives every byte back; the reservation is then empty.
  void Reset();
  uint64_t bytes() const { return bytes_; }

 private:
  friend class BodyBudget;
  BodyReservation(BodyBudget* budget, uint64_t bytes) : budget_(budget), bytes_(bytes) {}

  BodyBudget* budget_ = nullptr;
  uint64_t bytes_ = 0;
};

class BodyBudget {
 public:
  using Clock = std::chrono::steady_clock;

  // `limit`: bytes that may be reserved at once; 0 = no limit. `reserved_gauge`, if not
  // null, follows reserved() (it must outlive the budget).
  BodyBudget(uint64_t limit, Gauge* reserved_gauge);

  // A reservation of `bytes`, or nullopt when it would take reserved() past the limit.
  std::optional<BodyReservation> Reserve(uint64_t bytes);

  uint64_t reserved() const { return reserved_.load(std::memory_order_relaxed); }
  uint64_t limit() const { return limit_; }
  // When reserved() last dropped to 0 (the epoch if it never held anything); nullopt while
  // bytes are reserved.
  std::optional<Clock::time_point> IdleFrom() const;

 private:
  friend class BodyReservation;
  bool Add(uint64_t bytes);
  void Sub(uint64_t bytes);

  const uint64_t limit_;
  Gauge* gauge_;
  std::atomic<uint64_t> reserved_{0};
  // When reserved() last dropped to 0 (steady clock ticks).
  std::atomic<Clock::rep> idle_from_{0};
};

}  // namespace xet::server_internal
