// Which bytes of a stored xorb's chunk data a verified transfer GET asks for: the Range
// header parsed, resolved against the data and authorized against the signed set. The
// decisions are those of server/transfer/xorb_range_response.h, as Status codes that
// BuildXorbRangeResponse turns into answers.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "protocol/byte_range.h"

namespace xet {

// The requested ranges, in request order, each inside the chunk data (open ends resolved,
// ends past the data clamped to it). Errors, with fixed ASCII messages without quotes:
//   PermissionDenied  no Range header, or a range outside `signed_ranges`;
//   InvalidArgument   a malformed Range header (byte_range.h; `a-` allowed, `-n` not) or
//                     more than kMaxByteRanges ranges;
//   OutOfRange        a range starting at or past the end of the data, or more bytes in
//                     total than the signed set holds of the data (overlap amplification).
Result<std::vector<ByteRange>> ResolveXorbRanges(uint64_t chunk_data_length,
                                                 std::span<const ByteRange> signed_ranges,
                                                 std::optional<std::string_view> range_header);

}  // namespace xet
