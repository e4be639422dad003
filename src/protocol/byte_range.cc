#include "protocol/byte_range.h"

#include <algorithm>
#include <charconv>

namespace xet {
namespace {

constexpr size_t kMaxDigits = 19;  // 10^19 - 1 < UINT64_MAX: no overflow check needed

bool IsOws(char c) { return c == ' ' || c == '\t'; }

// Parses a run of decimal digits at *pos. False when there is none or it is too long.
bool ParseNumber(std::string_view s, size_t* pos, uint64_t* value) {
  size_t start = *pos;
  uint64_t v = 0;
  while (*pos < s.size() && s[*pos] >= '0' && s[*pos] <= '9') {
    if (*pos - start >= kMaxDigits) return false;
    v = v * 10 + static_cast<uint64_t>(s[*pos] - '0');
    ++*pos;
  }
  if (*pos == start) return false;
  *value = v;
  return true;
}

bool StartsWithBytesUnit(std::string_view s) {
  constexpr std::string_view kUnit = "bytes=";
  if (s.size() < kUnit.size()) return false;
  for (size_t i = 0; i < kUnit.size(); ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != kUnit[i]) return false;
  }
  return true;
}

}  // namespace

Result<std::vector<ByteRange>> ParseByteRanges(std::string_view header,
                                               const RangeParseOptions& options) {
  if (!StartsWithBytesUnit(header)) {
    return Status::InvalidArgument("range set must start with 'bytes='");
  }
  std::string_view s = header.substr(6);
  std::vector<ByteRange> ranges;
  size_t pos = 0;
  while (true) {
    if (options.allow_whitespace) {
      while (pos < s.size() && IsOws(s[pos])) ++pos;
    }
    ByteRange r;
    if (!ParseNumber(s, &pos, &r.first)) {
      return Status::InvalidArgument(
          "range set: expected a range start (suffix ranges are not supported)");
    }
    if (pos >= s.size() || s[pos] != '-') {
      return Status::InvalidArgument("range set: expected '-'");
    }
    ++pos;
    if (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (!ParseNumber(s, &pos, &r.last)) {
        return Status::InvalidArgument("range set: number too large");
      }
      if (r.last < r.first) return Status::InvalidArgument("range set: end before start");
    } else {
      if (!options.allow_open_end) return Status::InvalidArgument("range set: missing range end");
      r.last = kOpenEnd;
    }
    if (ranges.size() >= options.max_ranges) {
      return Status::ResourceExhausted("range set: too many ranges");
    }
    ranges.push_back(r);
    if (options.allow_whitespace) {
      while (pos < s.size() && IsOws(s[pos])) ++pos;
    }
    if (pos == s.size()) break;
    if (s[pos] != ',') return Status::InvalidArgument("range set: unexpected character");
    ++pos;
  }
  return ranges;
}

void AppendByteRangeList(std::span<const ByteRange> ranges, std::string_view separator,
                         std::string* out) {
  char buf[48];
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (i > 0) out->append(separator);
    char* p = std::to_chars(buf, buf + 20, ranges[i].first).ptr;
    *p++ = '-';
    p = std::to_chars(p, p + 20, ranges[i].last).ptr;
    out->append(buf, static_cast<size_t>(p - buf));
  }
}

std::vector<ByteRange> NormalizeByteRanges(std::span<const ByteRange> ranges) {
  std::vector<ByteRange> sorted(ranges.begin(), ranges.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const ByteRange& a, const ByteRange& b) { return a.first < b.first; });
  std::vector<ByteRange> merged;
  merged.reserve(sorted.size());
  for (const ByteRange& r : sorted) {
    // Adjacent: r.first == last + 1 (no overflow: last < kOpenEnd when merged further).
    if (!merged.empty() && (r.first <= merged.back().last || r.first - merged.back().last == 1)) {
      merged.back().last = std::max(merged.back().last, r.last);
    } else {
      merged.push_back(r);
    }
  }
  return merged;
}

bool CheckRequestedRanges(std::span<const ByteRange> signed_ranges,
                          std::span<const ByteRange> requested) {
  std::vector<ByteRange> allowed = NormalizeByteRanges(signed_ranges);
  for (const ByteRange& r : requested) {
    if (r.last < r.first) return false;
    // The last allowed range starting at or before r.first.
    auto it = std::upper_bound(allowed.begin(), allowed.end(), r.first,
                               [](uint64_t v, const ByteRange& a) { return v < a.first; });
    if (it == allowed.begin()) return false;
    --it;
    if (r.last > it->last) return false;
  }
  return true;
}

}  // namespace xet
