#include "server/transfer/xorb_range_request.h"

#include <algorithm>

namespace xet {
namespace {

constexpr std::string_view kNotSatisfiable = "requested range not satisfiable";

// What the signed set holds of the data: signed bytes past its end are never served, so
// they do not count towards what overlapping requests may add up to.
uint64_t SignedBytesOfData(std::span<const ByteRange> signed_ranges, uint64_t chunk_data_length) {
  uint64_t total = 0;
  for (const ByteRange& r : NormalizeByteRanges(signed_ranges)) {
    if (r.first >= chunk_data_length) break;  // sorted: the rest lie past the end too
    total += std::min(r.last, chunk_data_length - 1) - r.first + 1;
  }
  return total;
}

}  // namespace

Result<std::vector<ByteRange>> ResolveXorbRanges(uint64_t chunk_data_length,
                                                 std::span<const ByteRange> signed_ranges,
                                                 std::optional<std::string_view> range_header) {
  if (!range_header) {
    return Status::PermissionDenied("a Range header within the signed ranges is required");
  }
  RangeParseOptions parse_options;
  parse_options.allow_open_end = true;
  auto parsed = ParseByteRanges(*range_header, parse_options);
  if (!parsed.ok()) return Status::InvalidArgument("malformed Range header");
  std::vector<ByteRange> ranges = std::move(parsed).value();

  // Resolve open ends against the data, then authorize against the signed set.
  for (ByteRange& r : ranges) {
    if (r.last == kOpenEnd) {
      if (r.first >= chunk_data_length) return Status::OutOfRange(kNotSatisfiable);
      r.last = chunk_data_length - 1;
    }
  }
  if (!CheckRequestedRanges(signed_ranges, ranges)) {
    return Status::PermissionDenied("requested range is outside the signed ranges");
  }
  const uint64_t signed_total = SignedBytesOfData(signed_ranges, chunk_data_length);
  uint64_t requested_total = 0;
  for (ByteRange& r : ranges) {
    if (r.first >= chunk_data_length) return Status::OutOfRange(kNotSatisfiable);
    r.last = std::min(r.last, chunk_data_length - 1);
    requested_total += r.size();
  }
  if (requested_total > signed_total) return Status::OutOfRange(kNotSatisfiable);
  return ranges;
}

}  // namespace xet
