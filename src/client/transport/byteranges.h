// The answer to a multi-range GET: `multipart/byteranges` (RFC 7233 appendix A, RFC 2046
// section 5.1), parsed incrementally as the body arrives, and the Content-Range values that
// label each part.
//
// Parts are framed by their Content-Range (the length of a part is last - first + 1), not
// by scanning for the boundary, so part bytes that happen to contain the boundary are never
// misread; after each part the parser requires CRLF and the delimiter. A preamble before
// the first delimiter and an epilogue after the closing one are skipped. Line endings must
// be CRLF. Every size is bounded: the preamble with the first delimiter, the blanks after a
// delimiter, and each part's header section with its blank line by kMaxMultipartHeaderBytes;
// each part by `max_part_bytes`; the number of parts by `max_parts`. The bounds, and so the
// outcome, do not depend on how the body is split into Feed calls.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace xet {

inline constexpr size_t kMaxMultipartHeaderBytes = 8 << 10;

// "bytes FIRST-LAST/LENGTH" or "bytes FIRST-LAST/*" (the unit case-insensitive).
struct ContentRange {
  uint64_t first = 0;
  uint64_t last = 0;                    // inclusive, >= first
  std::optional<uint64_t> full_length;  // nullopt for "*"
  uint64_t size() const { return last - first + 1; }
};
// InvalidArgument for anything else (unsatisfied "bytes */N" included, last < first, last
// >= LENGTH, numbers beyond uint64).
Result<ContentRange> ParseContentRange(std::string_view value);

// The boundary of a `multipart/byteranges; boundary=B` Content-Type (B plain or quoted; the
// type and parameter names case-insensitive). InvalidArgument when the type is different
// or the boundary is missing, empty, longer than 70 characters or not printable ASCII.
Result<std::string> MultipartBoundary(std::string_view content_type);

class ByteRangesParser {
 public:
  // Called with each complete part, in body order; a non-OK Status stops the parse and is
  // returned by Feed.
  using PartCallback = std::function<Status(const ContentRange&, std::span<const uint8_t>)>;

  // `part_buffer`: memory to hold the parts in (its capacity is reused; see TakePartBuffer).
  ByteRangesParser(std::string boundary, uint64_t max_part_bytes, size_t max_parts,
                   std::vector<uint8_t> part_buffer = {});

  // Consumes the next bytes of the body. Corruption for a malformed body (no delimiter,
  // part without Content-Range, a part longer than its Content-Range, a wrong boundary);
  // ResourceExhausted when a bound is exceeded. After an error the parser stays failed.
  Status Feed(std::string_view bytes, const PartCallback& on_part);
  // At the end of the body: Corruption unless the closing delimiter was seen.
  Status Finish() const;
  // Back to the start (for a restarted transfer).
  void Reset();

  size_t parts_seen() const { return parts_seen_; }
  // Hands the part buffer (capacity kept, contents unspecified) back to the caller; the
  // parser must not be fed afterwards.
  std::vector<uint8_t> TakePartBuffer() { return std::move(part_); }

 private:
  enum class State { kPreamble, kHeaders, kData, kAfterData, kDone, kFailed };
  // Parses one framing unit at the front of `in`: the bytes consumed, 0 when more are needed.
  Result<size_t> Step(std::string_view in);
  Result<size_t> AfterDelimiter(std::string_view in, size_t at);
  Status Fail(Status st);

  std::string boundary_;
  uint64_t max_part_bytes_;
  size_t max_parts_;
  State state_ = State::kPreamble;
  std::string pending_;  // an incomplete framing unit carried between Feed calls
  ContentRange part_range_;
  std::vector<uint8_t> part_;
  size_t parts_seen_ = 0;
  Status failure_;
};

}  // namespace xet
