// LogThrottle: lets at most one log line per key through per interval, and counts the
// ones it held back, so a burst of identical failures (every upload on a full disk) is
// logged once with "N more since", not once per request.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/mutex.h"

namespace xet {

class LogThrottle {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  // `interval` > 0. `clock` defaults to std::chrono::steady_clock::now (tests inject one).
  explicit LogThrottle(std::chrono::steady_clock::duration interval, Clock clock = {});

  // Records one event for `key`. Returns the number of events for `key` suppressed since
  // the last one let through when this one should be logged (the first event for a key,
  // or the first after `interval` has passed since the last logged one), or nullopt when
  // it should be suppressed. Thread-safe.
  std::optional<uint64_t> Admit(std::string_view key);

 private:
  struct KeyState {
    std::chrono::steady_clock::time_point last_logged;
    uint64_t suppressed = 0;
  };

  const std::chrono::steady_clock::duration interval_;
  const Clock clock_;
  Mutex mu_;
  std::unordered_map<std::string, KeyState> keys_ GUARDED_BY(mu_);  // a few fixed keys
};

}  // namespace xet
