// RangeAnswerReader: reads the answer to one ranged GET of a xorb (CasClient::FetchRanges)
// as it streams in, and delivers the requested ranges in request order.
//
// Three kinds of answer are accepted:
//   - 206 multipart/byteranges: parts in any order, coalesced parts allowed, each part's
//     length checked against its Content-Range; parts that arrive early are held back;
//   - 206 with one Content-Range covering the ranges: the body is buffered, then delivered;
//   - 200 with the whole object: bytes up to the last requested one are kept.
// Anything else is Corruption. The reader is driven by HttpClient::Stream's callbacks
// (OnHeaders, OnBody, OnRestart) and then Finish; a restarted transfer never delivers a
// range twice. Not thread-safe (one transfer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "client/cas/cas_client.h"
#include "client/transport/byteranges.h"
#include "client/transport/http_client.h"
#include "common/result.h"

namespace xet {

// The Range header value asking for `ranges` in order: "bytes=A-B,C-D". InvalidArgument
// (prefixed by `what`, naming range index_base + i) when a range ends before it starts.
Result<std::string> RangeRequestHeader(std::span<const FetchRange> ranges, size_t index_base,
                                       std::string_view what);

class RangeAnswerReader {
 public:
  using OnRange = std::function<Status(size_t, std::span<const uint8_t>)>;

  // Requires `ranges` non-empty and each ending at or after its start (RangeRequestHeader
  // checked it). Range i is delivered as on_range(index_base + i, bytes). `what` prefixes
  // error messages ("GET <url>"). `buffer` holds the answer's bytes (a single-range or whole
  // body, or the current multipart part); it is cleared now and its capacity is kept.
  // `ranges`, `on_range` and `buffer` must outlive the reader.
  RangeAnswerReader(std::span<const FetchRange> ranges, size_t index_base, const OnRange& on_range,
                    std::string what, std::vector<uint8_t>& buffer);
  // Gives the buffer back from the multipart parser, whatever happened.
  ~RangeAnswerReader();
  RangeAnswerReader(const RangeAnswerReader&) = delete;
  RangeAnswerReader& operator=(const RangeAnswerReader&) = delete;

  // HttpClient::StreamCallbacks: the status and headers of a (2xx) answer, again for each
  // retried attempt; a piece of its body (false stops the transfer: see Finish); a restart
  // after body bytes were seen.
  void OnHeaders(int status, const HeaderList& headers);
  bool OnBody(std::string_view bytes);
  void OnRestart();

  // After HttpClient::Stream returned `transfer`: delivers what the answer still holds and
  // checks that every range was delivered. Returns, in this order: why the reader stopped
  // the transfer (an error of `on_range` as is); the transfer's error; the answer's HTTP
  // error (StatusFromResponse); Corruption for a truncated or unusable answer or a missing
  // range; an error of `on_range`.
  Status Finish(const Result<ClientResponse>& transfer);

 private:
  enum class Mode { kUnknown, kMultipart, kSingle, kWhole };
  class Delivery;

  void StartMultipart(std::string_view content_type);
  void StartSingle(const ClientResponse& view);
  bool FeedMultipart(std::string_view bytes);
  bool FeedSingle(std::string_view bytes);
  bool FeedWhole(std::string_view bytes);
  Status FinishSingle();
  Status FinishWhole();
  // Takes the buffer back from the parser, if it has it, and drops the parser.
  void ReclaimBuffer();

  const std::string what_;
  uint64_t highest_ = 0;   // the last requested byte
  uint64_t max_part_ = 0;  // no part is larger than the span of the requested bytes
  size_t num_ranges_ = 0;
  std::unique_ptr<Delivery> delivery_;
  std::vector<uint8_t>& buffer_;  // kMultipart: lent to the parser
  Mode mode_ = Mode::kUnknown;
  std::optional<ByteRangesParser> parser_;
  ContentRange single_;  // kSingle: the answer's Content-Range
  Status failure_;       // why OnHeaders/OnBody stopped the transfer
};

}  // namespace xet
