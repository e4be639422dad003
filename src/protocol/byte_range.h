// Byte ranges as HTTP writes them (inclusive ends), the parser for `Range`-style range
// sets, and the check that a requested set lies inside a signed one.
//
// Range-set syntax accepted (RFC 7233 `byte-ranges-specifier`, restricted to what the Xet
// protocol needs): `bytes=FIRST-LAST[,FIRST-LAST]...`. The unit `bytes` is
// case-insensitive; optional spaces/tabs are allowed around commas (and nowhere else).
// Rejected as malformed: suffix ranges (`-N`; no Xet client sends them), LAST < FIRST,
// numbers of more than 19 digits or beyond UINT64_MAX - 1, empty elements, any other
// character, and more than `max_ranges` ranges. Open-ended ranges (`FIRST-`) are accepted
// only when the caller allows them, and then carry `last == kOpenEnd`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace xet {

// An inclusive byte range [first, last].
struct ByteRange {
  uint64_t first = 0;
  uint64_t last = 0;
  uint64_t size() const { return last - first + 1; }
  friend bool operator==(const ByteRange&, const ByteRange&) = default;
};

// `last` of an open-ended range `FIRST-`.
inline constexpr uint64_t kOpenEnd = UINT64_MAX;
// Default cap on the number of ranges in one header or signed set.
inline constexpr size_t kMaxByteRanges = 1024;

struct RangeParseOptions {
  size_t max_ranges = kMaxByteRanges;
  bool allow_open_end = false;   // accept `FIRST-` (last = kOpenEnd)
  bool allow_whitespace = true;  // accept OWS around commas
};

// Parses `bytes=...` into ranges in the order written (not sorted, not merged).
// InvalidArgument on malformed input, ResourceExhausted on too many ranges.
Result<std::vector<ByteRange>> ParseByteRanges(std::string_view header,
                                               const RangeParseOptions& options = {});

// Appends "FIRST-LAST,FIRST-LAST" (no unit, no spaces). `separator` joins the ranges, e.g.
// "%2C" inside a URL query.
void AppendByteRangeList(std::span<const ByteRange> ranges, std::string_view separator,
                         std::string* out);

// Sorts ranges by first and merges overlapping or adjacent ones.
std::vector<ByteRange> NormalizeByteRanges(std::span<const ByteRange> ranges);

// True when every requested range lies entirely inside the union of the signed ranges
// (i.e. inside one range of the normalized signed set). A sub-range of a signed range is
// allowed; requested ranges may be in any order and may overlap each other. Requested
// ranges must have last >= first and no open end (resolve open ends first).
bool CheckRequestedRanges(std::span<const ByteRange> signed_ranges,
                          std::span<const ByteRange> requested);

}  // namespace xet
