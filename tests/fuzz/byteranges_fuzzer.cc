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
#include "fuzz/support/arrivals.h"
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

// Feeds `body` as `arrival` splits it.
Outcome Parse(xet::ByteRangesParser& parser, std::string_view body,
              const xet::fuzz::Arrival& arrival) {
  Outcome out;
  const xet::ByteRangesParser::PartCallback on_part = [&](const xet::ContentRange& r,
                                                          std::span<const uint8_t> bytes) {
    Check(bytes.size() == r.size(), "a part's length differs from its Content-Range");
    out.parts.push_back(
        Part{r.first, r.last, r.full_length,
             std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size())});
    return xet::Status::Ok();
  };
  xet::fuzz::FeedInPieces(std::span(body), arrival, [&](std::span<const char> piece) {
    const xet::Status st = parser.Feed(std::string_view(piece.data(), piece.size()), on_part);
    if (st.ok()) return true;
    Check(st.code() == xet::Status::Code::kCorruption ||
              st.code() == xet::Status::Code::kResourceExhausted,
          "Feed's error code");
    Check(!st.message().empty(), "Feed's error without a message");
    out.feed = st.code();
    return false;
  });
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

  const std::vector<xet::fuzz::Arrival> arrivals = xet::fuzz::Arrivals(std::span(text), 97);
  xet::ByteRangesParser parser(*boundary, kMaxPartBytes, kMaxParts);
  const Outcome whole = Parse(parser, text, arrivals[0]);
  parser.Reset();
  Check(Parse(parser, text, arrivals[0]) == whole, "a second parse after Reset differs");
  for (size_t i = 1; i < arrivals.size(); ++i) {
    xet::ByteRangesParser fresh(*boundary, kMaxPartBytes, kMaxParts);
    Check(Parse(fresh, text, arrivals[i]) == whole, "how the body arrives changes the outcome");
  }
  heap.Check("byteranges_fuzzer", size, 64, 1 << 20);
  return 0;
}
