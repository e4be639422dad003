#include "common/log_throttle.h"

#include <utility>

namespace xet {

LogThrottle::LogThrottle(std::chrono::steady_clock::duration interval, Clock clock)
    : interval_(interval),
      clock_(clock ? std::move(clock) : Clock([] { return std::chrono::steady_clock::now(); })) {}

std::optional<uint64_t> LogThrottle::Admit(std::string_view key) {
  const auto now = clock_();
  MutexLock lock(mu_);
  auto [it, inserted] = keys_.try_emplace(std::string(key));
  KeyState& state = it->second;
  if (!inserted && now - state.last_logged < interval_) {
    ++state.suppressed;
    return std::nullopt;
  }
  const uint64_t suppressed = state.suppressed;
  state.last_logged = now;
  state.suppressed = 0;
  return suppressed;
}

}  // namespace xet
