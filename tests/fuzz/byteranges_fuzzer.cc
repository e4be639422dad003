// libFuzzer target: the client's reading of a multi-range answer
// (client/transport/byteranges.h): the Content-Type's boundary, then the multipart/byteranges
// body, parsed incrementally as it arrives. A hostile or broken server controls both.
//
// Input: "CONTENT-TYPE\nBODY". No newline: the whole input is the body, under
// "multipart/byteranges; boundary=B".
// Properties:
//   - nothing crashes or throws; a Content-Type without a usable boundary is InvalidArgument;
//     a refused body is Corruption or ResourceExhausted, with a message;
//   - every part delivered is as long as its Content-Range says, and no more parts than the
//     bound are delivered;
//   - how the body is split into arrivals changes nothing: fed whole, byte by byte and in
//     pieces of varying size, the parser delivers the same parts and reaches the same end
//     (the same Feed and Finish outcome);
//   - Reset() returns the parser to its start: a second parse of the whole body after a
//     Reset delivers the same again;
//   - heap growth stays linear in the input.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "client/transport/byteranges.h"
#include "fuzz/support/heap_meter.h"
#include "fuzz/support/property_check.h"

namespace {

constexpr xet::fuzz::PropertyCheck Check("byteranges_fuzzer");

constexpr uint64_t kMaxPartBytes = 64 << 10;
constexpr size_t kMaxParts = 32;

struct Part {
  uint64_t first, last;
  std::optional<uint64_t> full_length;
  std::string bytes;
  bool operator==(const Part&) const = default;
};

struct Outcome {
  std::vector<Part> parts;
  xet::Status::Code feed = xet::Status::Code::kOk;
  xet::Status::Code finish = xet::Status::Code::kOk;
  bool operator==(const Outcome&) const = default;
};

// Feeds `body` in pieces whose sizes cycle through `sizes` (each at least 1).
Outcome Parse(xet::ByteRangesParser& parser, std::string_view body,
              const std::vector<size_t>& sizes) {
  Outcome out;
  const xet::ByteRangesParser::PartCallback on_part = [&](const xet::ContentRange& r,
                                                          std::span<const uint8_t> bytes) {
    Check(bytes.size() == r.size(), "a part's length differs from its Content-Range");
    out.parts.push_back(
        Part{r.first, r.last, r.full_length,
             std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size())});
    return xet::Status::Ok();
  };
  size_t at = 0;
  for (size_t i = 0; at < body.size(); ++i) {
    const size_t n = std::min(sizes[i % sizes.size()], body.size() - at);
    const xet::Status st = parser.Feed(body.substr(at, n), on_part);
    at += n;
    if (!st.ok()) {
      Check(st.code() == xet::Status::Code::kCorruption ||
                st.code() == xet::Status::Code::kResourceExhausted,
            "Feed's error code");
      Check(!st.message().empty(), "Feed's error without a message");
      out.feed = st.code();
      break;
    }
  }
  const xet::Status fin = parser.Finish();
  if (!fin.ok()) Check(!fin.message().empty(), "Finish's error without a message");
  out.finish = fin.code();
  Check(out.parts.size() <= kMaxParts, "more parts than the bound");
  Check(out.parts.size() == parser.parts_seen(), "parts_seen");
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string content_type = "multipart/byteranges; boundary=B";
  if (const size_t nl = text.find('\n'); nl != std::string_view::npos) {
    content_type = std::string(text.substr(0, nl));
    text.remove_prefix(nl + 1);
  }
  xet::fuzz::HeapScope heap;
  auto boundary = xet::MultipartBoundary(content_type);
  if (!boundary.ok()) {
    Check(boundary.status().code() == xet::Status::Code::kInvalidArgument, "boundary rejection");
    heap.Check("byteranges_fuzzer", size, 64, 1 << 20);
    return 0;
  }
  Check(!boundary->empty() && boundary->size() <= 70, "boundary length");

  xet::ByteRangesParser parser(*boundary, kMaxPartBytes, kMaxParts);
  const Outcome whole = Parse(parser, text, {text.size() + 1});
  parser.Reset();
  Check(Parse(parser, text, {text.size() + 1}) == whole, "a second parse after Reset differs");

  // Piece sizes from the body itself, so that the fuzzer steers them too.
  std::vector<size_t> sizes;
  for (size_t i = 0; i < 8 && i < text.size(); ++i) {
    sizes.push_back(1 + static_cast<uint8_t>(text[text.size() - 1 - i]) % 97);
  }
  if (sizes.empty()) sizes.push_back(1);
  xet::ByteRangesParser pieces(*boundary, kMaxPartBytes, kMaxParts);
  Check(Parse(pieces, text, sizes) == whole, "pieces of varying size change the outcome");
  if (text.size() <= 4096) {  // byte by byte is quadratic at worst: keep inputs short
    xet::ByteRangesParser bytes(*boundary, kMaxPartBytes, kMaxParts);
    Check(Parse(bytes, text, {1}) == whole, "byte-by-byte arrival changes the outcome");
  }
  heap.Check("byteranges_fuzzer", size, 64, 1 << 20);
  return 0;
}
