#include "server/transfer/xorb_range_response.h"

#include <openssl/rand.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

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
  if (!range_header)
    return ErrorResponse(403, "a Range header within the signed ranges is required");
  RangeParseOptions parse_options;
  parse_options.allow_open_end = true;
  auto parsed = ParseByteRanges(*range_header, parse_options);
  if (!parsed.ok()) return ErrorResponse(400, "malformed Range header");
  std::vector<ByteRange> ranges = std::move(parsed).value();

  auto unsatisfiable = [&] {
    HttpResponse r = ErrorResponse(416, "requested range not satisfiable");
    r.headers.Add("Content-Range", "bytes */" + std::to_string(chunk_data_length));
    return r;
  };
  // Resolve open ends against the data, then authorize against the signed set.
  for (ByteRange& r : ranges) {
    if (r.last == kOpenEnd) {
      if (r.first >= chunk_data_length) return unsatisfiable();
      r.last = chunk_data_length - 1;
    }
  }
  if (!CheckRequestedRanges(signed_ranges, ranges)) {
    return ErrorResponse(403, "requested range is outside the signed ranges");
  }
  // What the signed set holds of the data: signed bytes past its end are never served, so
  // they do not count towards what overlapping requests may add up to.
  uint64_t signed_total = 0;
  for (const ByteRange& r : NormalizeByteRanges(signed_ranges)) {
    if (r.first >= chunk_data_length) break;  // sorted: the rest lie past the end too
    signed_total += std::min(r.last, chunk_data_length - 1) - r.first + 1;
  }
  uint64_t requested_total = 0;
  for (ByteRange& r : ranges) {
    if (r.first >= chunk_data_length) return unsatisfiable();
    r.last = std::min(r.last, chunk_data_length - 1);
    requested_total += r.size();
  }
  if (requested_total > signed_total) return unsatisfiable();

  // The body as pieces: literal text (multipart framing) or a range of the object.
  std::vector<BodyPiece> pieces;
  HttpResponse resp;
  resp.status = 206;
  if (ranges.size() == 1) {
    resp.headers.Add("Content-Type", "application/octet-stream");
    resp.headers.Add("Content-Range", ContentRange(ranges[0], chunk_data_length));
    pieces.push_back({{}, ranges[0]});
  } else {
    const std::string boundary =
        options.boundary.empty() ? NewMultipartBoundary() : options.boundary;
    for (const ByteRange& r : ranges) {
      pieces.push_back({"--" + boundary +
                            "\r\nContent-Type: application/octet-stream\r\nContent-Range: " +
                            ContentRange(r, chunk_data_length) + "\r\n\r\n",
                        r});
      pieces.push_back({"\r\n", std::nullopt});
    }
    pieces.push_back({"--" + boundary + "--\r\n", std::nullopt});
    resp.headers.Add("Content-Type", "multipart/byteranges; boundary=" + boundary);
  }
  uint64_t body_size = 0;
  for (const BodyPiece& p : pieces) body_size += p.text.size() + (p.range ? p.range->size() : 0);

  if (body_size <= options.stream_threshold) {
    resp.body.reserve(body_size);
    for (const BodyPiece& p : pieces) {
      resp.body += p.text;
      if (!p.range) continue;
      const size_t at = resp.body.size();
      resp.body.resize(at + p.range->size());
      Status st = source.read(
          p.range->first,
          std::span<uint8_t>(reinterpret_cast<uint8_t*>(resp.body.data() + at), p.range->size()));
      if (!st.ok()) return ErrorResponse(500, JsonSafe(st.ToString()));
    }
    return resp;
  }
  if (source.memory || source.file.valid()) {
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
  resp.content_length = body_size;
  const size_t piece = std::max<size_t>(1, options.stream_piece);
  resp.stream = [pieces = std::move(pieces), read = std::move(source.read),
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

}  // namespace xet
