#include "server/transfer/xorb_range_response.h"

#include <openssl/rand.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "server/transfer/xorb_range_request.h"

namespace xet {
namespace {

// A JSON error answer built here (not via HttpResponse::Error) so this library does not
// depend on the server library. Messages are fixed ASCII without quotes.
HttpResponse ErrorResponse(int status, std::string_view message) {
  HttpResponse r;
  r.status = status;
  r.headers.Add("Content-Type", "application/json");
  r.body = std::string("{\"error\":\"") + std::string(message) + "\"}";
  return r;
}

std::string ContentRange(const ByteRange& r, uint64_t length) {
  return "bytes " + std::to_string(r.first) + "-" + std::to_string(r.last) + "/" +
         std::to_string(length);
}

std::string JsonSafe(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) c = '\'';
    out.push_back(c);
  }
  return out;
}

struct BodyPiece {
  std::string text;                // sent first
  std::optional<ByteRange> range;  // then these bytes of the object
};

// The answer for a refusal of ResolveXorbRanges.
HttpResponse RefusalResponse(const Status& refusal, uint64_t chunk_data_length) {
  switch (refusal.code()) {
    case Status::Code::kPermissionDenied:
      return ErrorResponse(403, refusal.message());
    case Status::Code::kInvalidArgument:
      return ErrorResponse(400, refusal.message());
    case Status::Code::kOutOfRange: {
      HttpResponse r = ErrorResponse(416, refusal.message());
      r.headers.Add("Content-Range", "bytes */" + std::to_string(chunk_data_length));
      return r;
    }
    default:
      return ErrorResponse(500, JsonSafe(refusal.ToString()));
  }
}

// The body as pieces, literal text (multipart framing) or a range of the object, with the
// Content-Type (and for one range the Content-Range) set on `resp`.
std::vector<BodyPiece> LayOutBody(const std::vector<ByteRange>& ranges, uint64_t chunk_data_length,
                                  const std::string& boundary_option, HttpResponse& resp) {
  std::vector<BodyPiece> pieces;
  if (ranges.size() == 1) {
    resp.headers.Add("Content-Type", "application/octet-stream");
    resp.headers.Add("Content-Range", ContentRange(ranges[0], chunk_data_length));
    pieces.push_back({{}, ranges[0]});
    return pieces;
  }
  const std::string boundary = boundary_option.empty() ? NewMultipartBoundary() : boundary_option;
  for (const ByteRange& r : ranges) {
    pieces.push_back({"--" + boundary +
                          "\r\nContent-Type: application/octet-stream\r\nContent-Range: " +
                          ContentRange(r, chunk_data_length) + "\r\n\r\n",
                      r});
    pieces.push_back({"\r\n", std::nullopt});
  }
  pieces.push_back({"--" + boundary + "--\r\n", std::nullopt});
  resp.headers.Add("Content-Type", "multipart/byteranges; boundary=" + boundary);
  return pieces;
}

uint64_t BodySize(const std::vector<BodyPiece>& pieces) {
  uint64_t size = 0;
  for (const BodyPiece& p : pieces) size += p.text.size() + (p.range ? p.range->size() : 0);
  return size;
}

// A small answer: the body built in memory through `read`.
HttpResponse BufferedAnswer(HttpResponse resp, const std::vector<BodyPiece>& pieces,
                            uint64_t body_size, const XorbReader& read) {
  resp.body.reserve(body_size);
  for (const BodyPiece& p : pieces) {
    resp.body += p.text;
    if (!p.range) continue;
    const size_t at = resp.body.size();
    resp.body.resize(at + p.range->size());
    Status st = read(
        p.range->first,
        std::span<uint8_t>(reinterpret_cast<uint8_t*>(resp.body.data() + at), p.range->size()));
    if (!st.ok()) return ErrorResponse(500, JsonSafe(st.ToString()));
  }
  return resp;
}

// A large answer from the source's memory or file: a RangeBody the server sends without a
// copy. Requires source.memory or a valid source.file.
HttpResponse RangeBodyAnswer(HttpResponse resp, std::vector<BodyPiece> pieces, XorbSource source) {
  auto body = std::make_shared<RangeBody>();
  if (source.memory) {
    body->memory = std::move(source.memory);
  } else {
    body->file = std::move(source.file);
  }
  for (BodyPiece& p : pieces) {
    body->pieces.push_back(
        {std::move(p.text), p.range ? p.range->first : 0, p.range ? p.range->size() : 0});
  }
  resp.range_body = std::move(body);
  return resp;
}

// A large answer read through `read` as the server writes it, `piece` bytes at a time into
// one reused buffer; a reader failure ends the body early.
HttpResponse StreamedAnswer(HttpResponse resp, std::vector<BodyPiece> pieces, uint64_t body_size,
                            XorbReader read, size_t piece) {
  resp.content_length = body_size;
  resp.stream = [pieces = std::move(pieces), read = std::move(read),
                 piece](const std::function<bool(std::string_view)>& write) {
    std::vector<uint8_t> buffer;
    for (const BodyPiece& p : pieces) {
      if (!p.text.empty() && !write(p.text)) return;
      if (!p.range) continue;
      for (uint64_t at = p.range->first; at <= p.range->last;) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(piece, p.range->last - at + 1));
        if (buffer.size() < n) buffer.resize(n);
        if (!read(at, std::span<uint8_t>(buffer.data(), n)).ok()) return;  // a short body
        if (!write(std::string_view(reinterpret_cast<const char*>(buffer.data()), n))) return;
        at += n;
      }
    }
  };
  return resp;
}

}  // namespace

XorbSource XorbSource::FromMemory(std::shared_ptr<const std::string> chunk_data) {
  XorbSource source([chunk_data](uint64_t offset, std::span<uint8_t> out) {
    if (offset > chunk_data->size() || out.size() > chunk_data->size() - offset) {
      return Status::OutOfRange("read past the end of the xorb's chunk data");
    }
    std::memcpy(out.data(), chunk_data->data() + offset, out.size());
    return Status::Ok();
  });
  source.memory = std::move(chunk_data);
  return source;
}

std::string NewMultipartBoundary() {
  unsigned char raw[16];
  if (RAND_bytes(raw, sizeof(raw)) != 1) {
    // No randomness available (practically never): a fixed boundary. Clients that scan for
    // the boundary could then be confused by xorb bytes containing it; accept that risk.
    return "xetstore-byteranges-boundary";
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (unsigned char b : raw) {
    s.push_back(kHex[b >> 4]);
    s.push_back(kHex[b & 0xF]);
  }
  return s;
}

HttpResponse BuildXorbRangeResponse(uint64_t chunk_data_length,
                                    std::span<const ByteRange> signed_ranges,
                                    std::optional<std::string_view> range_header, XorbSource source,
                                    const XorbRangeResponseOptions& options) {
  auto ranges = ResolveXorbRanges(chunk_data_length, signed_ranges, range_header);
  if (!ranges.ok()) return RefusalResponse(ranges.status(), chunk_data_length);
  HttpResponse resp;
  resp.status = 206;
  std::vector<BodyPiece> pieces = LayOutBody(*ranges, chunk_data_length, options.boundary, resp);
  const uint64_t body_size = BodySize(pieces);
  if (body_size <= options.stream_threshold) {
    return BufferedAnswer(std::move(resp), pieces, body_size, source.read);
  }
  if (source.memory || source.file.valid()) {
    return RangeBodyAnswer(std::move(resp), std::move(pieces), std::move(source));
  }
  return StreamedAnswer(std::move(resp), std::move(pieces), body_size, std::move(source.read),
                        std::max<size_t>(1, options.stream_piece));
}

}  // namespace xet
