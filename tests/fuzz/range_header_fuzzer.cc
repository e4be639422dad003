// libFuzzer target: `Range`-style range sets (protocol/byte_range.h) and the transfer route's
// answer to a Range header (server/transfer/xorb_range_response.h).
//
// Input: "SIGNED\nLENGTH\nRANGE" -- the signed range set (as a transfer URL carries it),
// the chunk-data length (decimal, taken modulo 64 KiB) and the request's Range header.
// Inputs without two newlines only exercise the parser, on the whole input.
// Properties, on every input:
//   - ParseByteRanges never crashes; an error carries a message and is InvalidArgument or
//     ResourceExhausted; an accepted set has 1..max_ranges ranges, each first <= last,
//     open ends only when allowed, and it round-trips through AppendByteRangeList;
//     relaxing an option (whitespace, open ends, more ranges) never rejects what the
//     stricter options accepted, nor changes the result;
//   - NormalizeByteRanges is sorted, disjoint, non-adjacent, covers every input range and
//     no byte outside them;
//   - BuildXorbRangeResponse answers 206/400/403/416 only; a 206 serves exactly the
//     requested bytes of the data (checked against the data itself, for a single range and
//     for every part of a multipart answer), every served byte lies inside the signed set
//     and the data, the body is at most the signed total plus framing; a 416 names the
//     length; the in-memory body and the zero-copy RangeBody form carry the same bytes;
//   - heap growth stays linear in the input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/support/heap_meter.h"
#include "fuzz/support/property_check.h"
#include "protocol/byte_range.h"
#include "server/transfer/xorb_range_response.h"

namespace {

using xet::ByteRange;

constexpr xet::fuzz::PropertyCheck Check("range_header_fuzzer");

xet::Result<std::vector<ByteRange>> ParseChecked(std::string_view text,
                                                 const xet::RangeParseOptions& opts) {
  auto r = xet::ParseByteRanges(text, opts);
  if (!r.ok()) {
    Check(!r.status().message().empty(), "error without a message");
    Check(r.status().code() == xet::Status::Code::kInvalidArgument ||
              r.status().code() == xet::Status::Code::kResourceExhausted,
          "unexpected error code");
    return r;
  }
  Check(!r->empty() && r->size() <= opts.max_ranges, "range count outside 1..max_ranges");
  std::vector<ByteRange> closed;
  for (const ByteRange& b : *r) {
    Check(b.first <= b.last, "first > last");
    Check(b.last != xet::kOpenEnd || opts.allow_open_end, "open end not allowed");
    Check(b.first < xet::kOpenEnd, "first at UINT64_MAX");
    if (b.last != xet::kOpenEnd) closed.push_back(b);
  }
  if (closed.size() == r->size()) {
    std::string again = "bytes=";
    xet::AppendByteRangeList(*r, ",", &again);
    auto reparsed = xet::ParseByteRanges(again, opts);
    Check(reparsed.ok() && *reparsed == *r, "round trip through AppendByteRangeList differs");
  }
  return r;
}

void CheckNormalize(const std::vector<ByteRange>& in) {
  const std::vector<ByteRange> out = xet::NormalizeByteRanges(in);
  for (size_t i = 0; i < out.size(); ++i) {
    Check(out[i].first <= out[i].last, "normalized range reversed");
    if (i > 0) {
      Check(out[i - 1].last < out[i].first && out[i].first - out[i - 1].last > 1,
            "normalized ranges overlap or touch");
    }
  }
  // Every input range lies inside one output range ...
  for (const ByteRange& r : in) {
    bool inside = false;
    for (const ByteRange& o : out) inside = inside || (o.first <= r.first && r.last <= o.last);
    Check(inside, "an input range is not covered");
  }
  // ... and every output range's ends are bytes of some input range.
  for (const ByteRange& o : out) {
    bool first = false, last = false;
    for (const ByteRange& r : in) {
      first = first || (r.first <= o.first && o.first <= r.last);
      last = last || (r.first <= o.last && o.last <= r.last);
    }
    Check(first && last, "normalized range reaches outside the input");
  }
  Check(xet::CheckRequestedRanges(in, in), "a set is not inside itself");
}

bool InsideSet(const std::vector<ByteRange>& set, uint64_t first, uint64_t last) {
  for (const ByteRange& o : xet::NormalizeByteRanges(set)) {
    if (o.first <= first && last <= o.last) return true;
  }
  return false;
}

// Parses "bytes A-B/LEN" and checks the slice against the data and the signed set.
ByteRange CheckContentRange(std::string_view value, const std::string& data,
                            const std::vector<ByteRange>& signed_set) {
  const std::string prefix = "bytes ";
  Check(value.substr(0, prefix.size()) == prefix, "Content-Range without 'bytes '");
  unsigned long long a = 0, b = 0, len = 0;
  const std::string text(value.substr(prefix.size()));
  Check(std::sscanf(text.c_str(), "%llu-%llu/%llu", &a, &b, &len) == 3, "bad Content-Range");
  Check(len == data.size(), "Content-Range length differs from the data");
  Check(a <= b && b < data.size(), "served range outside the data");
  Check(InsideSet(signed_set, a, b), "served range outside the signed set");
  return ByteRange{a, b};
}

std::string Slice(const std::string& data, const ByteRange& r) {
  return data.substr(static_cast<size_t>(r.first), static_cast<size_t>(r.size()));
}

void CheckResponse(const std::vector<ByteRange>& signed_set, const std::string& data,
                   std::string_view header) {
  const std::string boundary = "fuzzboundary";
  auto memory = std::make_shared<const std::string>(data);
  xet::XorbRangeResponseOptions buffered;
  buffered.boundary = boundary;
  buffered.stream_threshold = UINT64_MAX;
  const xet::HttpResponse res = xet::BuildXorbRangeResponse(
      data.size(), signed_set, header, xet::XorbSource::FromMemory(memory), buffered);
  Check(res.status == 206 || res.status == 400 || res.status == 403 || res.status == 416,
        "unexpected status");
  if (res.status == 416) {
    Check(res.headers.Get("Content-Range") == "bytes */" + std::to_string(data.size()),
          "416 without the length");
  }
  if (res.status != 206) {
    Check(res.body.find("\"error\"") != std::string::npos, "error answer without a message");
    return;
  }
  uint64_t signed_total = 0;
  for (const ByteRange& r : xet::NormalizeByteRanges(signed_set)) signed_total += r.size();
  const auto ranges = xet::ParseByteRanges(header, {.allow_open_end = true});
  Check(ranges.ok(), "206 for a Range that does not parse");
  Check(res.body.size() <= signed_total + 200 * (ranges->size() + 1), "body beyond the signed set");

  const std::string type(res.headers.Get("Content-Type").value_or(""));
  if (ranges->size() == 1) {
    Check(type == "application/octet-stream", "single range with a multipart type");
    const ByteRange served =
        CheckContentRange(res.headers.Get("Content-Range").value_or(""), data, signed_set);
    Check(served.first == (*ranges)[0].first, "served range starts elsewhere");
    Check(res.body == Slice(data, served), "single-range body differs from the data");
  } else {
    Check(type == "multipart/byteranges; boundary=" + boundary, "multipart type");
    // Walk the parts in request order.
    std::string_view rest = res.body;
    for (const ByteRange& want : *ranges) {
      const std::string head =
          "--" + boundary + "\r\nContent-Type: application/octet-stream\r\nContent-Range: ";
      Check(rest.substr(0, head.size()) == head, "part header");
      rest.remove_prefix(head.size());
      const size_t eol = rest.find("\r\n\r\n");
      Check(eol != std::string_view::npos, "part header end");
      const ByteRange served = CheckContentRange(rest.substr(0, eol), data, signed_set);
      Check(served.first == want.first, "part starts elsewhere");
      rest.remove_prefix(eol + 4);
      const std::string bytes = Slice(data, served);
      Check(rest.substr(0, bytes.size()) == bytes, "part bytes differ from the data");
      rest.remove_prefix(bytes.size());
      Check(rest.substr(0, 2) == "\r\n", "part end");
      rest.remove_prefix(2);
    }
    Check(rest == "--" + boundary + "--\r\n", "multipart trailer");
  }

  // The zero-copy form: the same bytes, as pieces over the shared memory.
  xet::XorbRangeResponseOptions zero_copy;
  zero_copy.boundary = boundary;
  zero_copy.stream_threshold = 0;
  const xet::HttpResponse ranged = xet::BuildXorbRangeResponse(
      data.size(), signed_set, header, xet::XorbSource::FromMemory(memory), zero_copy);
  Check(ranged.status == 206 && ranged.range_body && ranged.range_body->memory,
        "zero-copy form missing");
  std::string joined;
  for (const auto& piece : ranged.range_body->pieces) {
    joined += piece.text;
    Check(piece.offset <= data.size() && piece.length <= data.size() - piece.offset,
          "piece outside the data");
    joined += data.substr(static_cast<size_t>(piece.offset), static_cast<size_t>(piece.length));
  }
  Check(joined == res.body, "zero-copy body differs from the buffered one");
  Check(ranged.range_body->size() == res.body.size(), "RangeBody::size differs");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  xet::fuzz::HeapScope heap;

  // The parser alone, under every option set, on the whole input.
  const xet::RangeParseOptions strict{
      .max_ranges = 1, .allow_open_end = false, .allow_whitespace = false};
  const xet::RangeParseOptions plain{};
  const xet::RangeParseOptions relaxed{.allow_open_end = true};
  auto s = ParseChecked(input, strict);
  auto p = ParseChecked(input, plain);
  auto r = ParseChecked(input, relaxed);
  Check(!s.ok() || (p.ok() && *p == *s), "strict accepts what the default rejects");
  Check(!p.ok() || (r.ok() && *r == *p), "default accepts what open ends reject");
  if (p.ok()) CheckNormalize(*p);

  const size_t nl1 = input.find('\n');
  const size_t nl2 = nl1 == std::string_view::npos ? nl1 : input.find('\n', nl1 + 1);
  if (nl2 != std::string_view::npos) {
    auto signed_set = xet::ParseByteRanges(input.substr(0, nl1));
    if (signed_set.ok()) {
      CheckNormalize(*signed_set);
      const std::string len_text(input.substr(nl1 + 1, nl2 - nl1 - 1));
      const size_t length = std::strtoull(len_text.c_str(), nullptr, 10) % (64 << 10);
      std::string bytes(length, '\0');
      for (size_t i = 0; i < length; ++i) bytes[i] = static_cast<char>((i * 7 + i / 251) & 0xFF);
      CheckResponse(*signed_set, bytes, input.substr(nl2 + 1));
    }
  }
  // The answer holds at most the data (64 KiB, twice: buffered and joined) plus framing.
  heap.Check("range_header_fuzzer", size, 64, 1 << 20);
  return 0;
}
