// The answer to a transfer GET (`/v1/transfer/xorb/default/<xorb>?<signed query>`) once
// the signature has been verified: the requested byte ranges of the stored xorb's chunk
// data, as 206 Partial Content.
//
// Decisions (the Xet spec: "a Range header requesting bytes outside the signed set returns
// an authorization failure"; the JS client always sends the signed set as its Range, the
// Rust client sends single signed sub-ranges):
//   - no Range header                       -> 403 (the spec requires the Range header)
//   - malformed Range (see byte_range.h; open-ended `a-` is allowed and resolved against
//     the data length; suffix `-n` is rejected) or more than kMaxByteRanges ranges -> 400
//   - a range not inside the signed set     -> 403
//   - a range starting at or past the end of the chunk data -> 416, Content-Range: bytes */len
//   - requested bytes in total more than the signed set holds of the chunk data
//     (overlapping ranges used to amplify a response) -> 416 (RFC 7233 4.4 allows
//     refusing overlapping range sets); so an answer is never larger than the chunk data
//     plus multipart framing
//   - one range     -> 206, Content-Range: bytes a-b/len, application/octet-stream
//   - several ranges -> 206, multipart/byteranges; boundary=B, parts in request order:
//       "--B\r\nContent-Type: application/octet-stream\r\nContent-Range: bytes a-b/len\r\n\r\n"
//       <bytes> "\r\n" ... "--B--\r\n"
//   - a reader failure -> 500 with the JSON error body.
// Answers whose body is larger than `stream_threshold` are not built in memory, so a
// 64 MiB xorb costs neither a 64 MiB allocation (faulted in and zero-filled per request)
// nor that much memory per concurrent download:
//   - when the source has the chunk data in memory (XorbSource::memory), the answer is a
//     RangeBody over that memory, which the server writes without a copy;
//   - else when the source has the object's file, the answer is a RangeBody: the framing
//     text and the file's ranges, which the server sends with sendfile(2) (no copy through
//     user space); a file that ends early ends the body early;
//   - otherwise it is streamed under its exact Content-Length (HttpResponse::stream): the
//     producer reads `stream_piece` bytes at a time into one reused buffer; a reader
//     failure in the middle ends the stream early.
// A body that ends early makes the server close the connection: the client sees a short
// body.
// `len` in Content-Range is the chunk-data length (the footer is never served), and a range
// end past it is clamped to it (RFC 7233).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "common/status.h"
#include "common/unique_fd.h"
#include "http/message.h"
#include "protocol/byte_range.h"

namespace xet {

// Reads out.size() bytes of the stored xorb object starting at `offset`. A streamed answer
// calls it after BuildXorbRangeResponse has returned, from another thread: it must own (or
// outlive the server with) everything it uses.
using XorbReader = std::function<Status(uint64_t offset, std::span<uint8_t> out)>;

// Where a xorb's bytes come from: `read` always; for answers above stream_threshold,
// `memory` when set (the chunk data itself, e.g. a RecentXorbCache entry, sent without a
// copy), else `file` when valid (the stored object opened for reading with
// ObjectStore::OpenFile, sent with sendfile(2)), else `read` again, streamed.
struct XorbSource {
  XorbSource(XorbReader r) : read(std::move(r)) {}  // NOLINT: implicit, a reader alone
  XorbSource(XorbReader r, UniqueFd f) : read(std::move(r)), file(std::move(f)) {}
  // A source reading from `chunk_data` (which must not be null) alone.
  static XorbSource FromMemory(std::shared_ptr<const std::string> chunk_data);

  XorbReader read;
  UniqueFd file;
  std::shared_ptr<const std::string> memory;
};

struct XorbRangeResponseOptions {
  // The multipart boundary; empty = a fresh random one (16 random bytes as hex).
  std::string boundary;
  uint64_t stream_threshold = 1 << 20;
  size_t stream_piece = 1 << 20;
};

HttpResponse BuildXorbRangeResponse(uint64_t chunk_data_length,
                                    std::span<const ByteRange> signed_ranges,
                                    std::optional<std::string_view> range_header, XorbSource source,
                                    const XorbRangeResponseOptions& options = {});

// A random multipart boundary: 32 lowercase hex digits.
std::string NewMultipartBoundary();

}  // namespace xet
