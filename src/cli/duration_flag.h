// Durations as operators write them on the command line (gc --grace).
#pragma once

#include <cstdint>
#include <string_view>

#include "common/result.h"

namespace xet::cli {

// "0", or a whole number followed by one unit: ms, s, m, h, d (e.g. "90s", "15m", "24h",
// "7d"), as milliseconds. InvalidArgument with a one-line reason for anything else (no unit,
// unknown unit, sign, fraction, or more than 100 years).
Result<int64_t> ParseDurationMs(std::string_view text);

}  // namespace xet::cli
