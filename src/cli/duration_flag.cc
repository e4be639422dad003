#include "cli/duration_flag.h"

#include <string>

namespace xet::cli {

Result<int64_t> ParseDurationMs(std::string_view text) {
  const std::string quoted = "'" + std::string(text) + "'";
  if (text == "0") return 0;
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 12) {
    return Status::InvalidArgument("invalid duration " + quoted +
                                   ": expected a whole number and a unit, e.g. 30s, 15m, 24h, 7d");
  }
  const int64_t n = std::stoll(std::string(text.substr(0, digits)));
  const std::string_view unit = text.substr(digits);
  int64_t unit_ms = 0;
  if (unit == "ms") {
    unit_ms = 1;
  } else if (unit == "s") {
    unit_ms = 1000;
  } else if (unit == "m") {
    unit_ms = 60'000;
  } else if (unit == "h") {
    unit_ms = 3'600'000;
  } else if (unit == "d") {
    unit_ms = 86'400'000;
  } else {
    return Status::InvalidArgument("invalid duration " + quoted +
                                   ": the unit must be one of ms, s, m, h, d");
  }
  constexpr int64_t kMaxMs = 100LL * 365 * 86'400'000;
  if (n > kMaxMs / unit_ms) {
    return Status::InvalidArgument("invalid duration " + quoted + ": longer than 100 years");
  }
  return n * unit_ms;
}

}  // namespace xet::cli
