#include "client/transport/byteranges.h"

#include <algorithm>
#include <charconv>

#include "common/ascii.h"
#include "common/huge_pages.h"

namespace xet {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Decimal digits only (no sign, no spaces), within uint64.
std::optional<uint64_t> ParseU64(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && EqualsIgnoreAsciiCase(s.substr(0, prefix.size()), prefix);
}

}  // namespace

Result<ContentRange> ParseContentRange(std::string_view value) {
  const std::string_view v = Trim(value);
  auto bad = [&] {
    return Status::InvalidArgument("malformed Content-Range '" +
                                   std::string(v.substr(0, std::min<size_t>(v.size(), 80))) + "'");
  };
  if (!StartsWithIgnoreCase(v, "bytes ")) return bad();
  std::string_view rest = Trim(v.substr(6));
  const size_t dash = rest.find('-');
  const size_t slash = rest.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || slash < dash) {
    return bad();
  }
  const auto first = ParseU64(rest.substr(0, dash));
  const auto last = ParseU64(rest.substr(dash + 1, slash - dash - 1));
  if (!first || !last || *last < *first) return bad();
  ContentRange out;
  out.first = *first;
  out.last = *last;
  const std::string_view len = rest.substr(slash + 1);
  if (len != "*") {
    const auto n = ParseU64(len);
    if (!n || *last >= *n) return bad();
    out.full_length = *n;
  }
  return out;
}

Result<std::string> MultipartBoundary(std::string_view content_type) {
  std::string_view rest = content_type;
  size_t semi = rest.find(';');
  if (!EqualsIgnoreAsciiCase(Trim(rest.substr(0, semi)), "multipart/byteranges")) {
    return Status::InvalidArgument("expected a multipart/byteranges answer, got '" +
                                   std::string(content_type.substr(0, 80)) + "'");
  }
  std::optional<std::string> boundary;
  while (semi != std::string_view::npos) {
    rest = rest.substr(semi + 1);
    semi = rest.find(';');
    const std::string_view param = Trim(rest.substr(0, semi));
    const size_t eq = param.find('=');
    if (eq == std::string_view::npos) continue;
    if (!EqualsIgnoreAsciiCase(Trim(param.substr(0, eq)), "boundary")) continue;
    std::string_view b = Trim(param.substr(eq + 1));
    if (b.size() >= 2 && b.front() == '"' && b.back() == '"') b = b.substr(1, b.size() - 2);
    boundary = std::string(b);
    break;
  }
  if (!boundary || boundary->empty() || boundary->size() > 70) {
    return Status::InvalidArgument("multipart/byteranges answer without a valid boundary");
  }
  for (char c : *boundary) {
    if (c < 0x20 || c > 0x7E) {
      return Status::InvalidArgument("multipart boundary is not printable ASCII");
    }
  }
  return *boundary;
}

ByteRangesParser::ByteRangesParser(std::string boundary, uint64_t max_part_bytes, size_t max_parts,
                                   std::vector<uint8_t> part_buffer)
    : boundary_(std::move(boundary)),
      max_part_bytes_(max_part_bytes),
      max_parts_(max_parts),
      part_(std::move(part_buffer)) {
  part_.clear();
}

void ByteRangesParser::Reset() {
  state_ = State::kPreamble;
  pending_.clear();
  part_.clear();
  parts_seen_ = 0;
  failure_ = Status::Ok();
}

Status ByteRangesParser::Fail(Status st) {
  state_ = State::kFailed;
  failure_ = st;
  pending_.clear();
  part_.clear();
  return st;
}

// `in[at..]` follows a delimiter "--B": either "--" (the close) or optional spaces/tabs
// and CRLF (a part follows).
Result<size_t> ByteRangesParser::AfterDelimiter(std::string_view in, size_t at) {
  if (in.size() < at + 2) return size_t{0};
  if (in.compare(at, 2, "--") == 0) {
    state_ = State::kDone;
    return at + 2;
  }
  size_t p = at;
  while (p < in.size() && (in[p] == ' ' || in[p] == '\t')) ++p;
  // The same bound whether the line arrived whole or in pieces.
  if (p - at > kMaxMultipartHeaderBytes) {
    return Status::Corruption("multipart body: malformed delimiter line");
  }
  if (p + 2 > in.size()) return size_t{0};
  if (in.compare(p, 2, "\r\n") != 0) {
    return Status::Corruption("multipart body: the boundary is followed by '" +
                              std::string(1, in[p]) + "' instead of a line break");
  }
  state_ = State::kHeaders;
  return p + 2;
}

Result<size_t> ByteRangesParser::Step(std::string_view in) {
  const std::string delimiter = "--" + boundary_;
  switch (state_) {
    case State::kPreamble: {
      // The first delimiter must end within the first kMaxMultipartHeaderBytes bytes, however
      // the body arrives: refused once that many bytes hold none, or when it ends later.
      size_t at = std::string_view::npos;
      if (in.starts_with(delimiter)) {
        at = 0;
      } else if (const size_t f = in.find("\r\n" + delimiter); f != std::string_view::npos) {
        at = f + 2;
      }
      const bool found = at != std::string_view::npos;
      if (found ? at + delimiter.size() > kMaxMultipartHeaderBytes
                : in.size() >= kMaxMultipartHeaderBytes) {
        return Status::Corruption("multipart body: no '" + delimiter + "' boundary in its first " +
                                  std::to_string(kMaxMultipartHeaderBytes) + " bytes");
      }
      if (!found) return size_t{0};
      return AfterDelimiter(in, at + delimiter.size());
    }
    case State::kHeaders: {
      if (in.starts_with("\r\n")) {
        return Status::Corruption("multipart body: part " + std::to_string(parts_seen_ + 1) +
                                  " has no Content-Range");
      }
      // The header section and its blank line must fit in kMaxMultipartHeaderBytes, however
      // they arrive: refused once that many bytes hold no blank line, or when it ends later.
      const size_t end = in.find("\r\n\r\n");
      const bool found = end != std::string_view::npos;
      if (found ? end + 4 > kMaxMultipartHeaderBytes : in.size() >= kMaxMultipartHeaderBytes) {
        return Status::ResourceExhausted("multipart body: part headers longer than " +
                                         std::to_string(kMaxMultipartHeaderBytes) + " bytes");
      }
      if (!found) return size_t{0};
      std::optional<ContentRange> range;
      std::string_view headers = in.substr(0, end + 2);
      while (!headers.empty()) {
        const size_t eol = headers.find("\r\n");
        const std::string_view line = headers.substr(0, eol);
        headers.remove_prefix(eol + 2);
        const size_t colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        if (!EqualsIgnoreAsciiCase(Trim(line.substr(0, colon)), "Content-Range")) continue;
        auto parsed = ParseContentRange(line.substr(colon + 1));
        if (!parsed.ok()) return Status::Corruption("multipart body: " + parsed.status().message());
        range = *parsed;
      }
      if (!range) {
        return Status::Corruption("multipart body: part " + std::to_string(parts_seen_ + 1) +
                                  " has no Content-Range");
      }
      if (parts_seen_ >= max_parts_) {
        return Status::ResourceExhausted("multipart body: more than " + std::to_string(max_parts_) +
                                         " parts");
      }
      if (range->size() > max_part_bytes_) {
        return Status::ResourceExhausted(
            "multipart body: part of " + std::to_string(range->size()) + " bytes (bytes " +
            std::to_string(range->first) + "-" + std::to_string(range->last) + ") exceeds the " +
            std::to_string(max_part_bytes_) + " bytes expected");
      }
      part_range_ = *range;
      part_.clear();
      if (part_.capacity() < range->size()) {
        part_.reserve(range->size());
        AdviseHugePages(part_.data(), part_.capacity());
      }
      state_ = State::kData;
      return end + 4;
    }
    case State::kAfterData: {
      const std::string expected = "\r\n" + delimiter;
      const size_t n = std::min(in.size(), expected.size());
      if (in.compare(0, n, expected, 0, n) != 0) {
        return Status::Corruption(
            "multipart body: part " + std::to_string(parts_seen_) + " (bytes " +
            std::to_string(part_range_.first) + "-" + std::to_string(part_range_.last) +
            ") is not followed by the boundary (longer than its Content-Range, or a wrong "
            "boundary)");
      }
      if (n < expected.size()) return size_t{0};
      return AfterDelimiter(in, expected.size());
    }
    case State::kData:
    case State::kDone:
    case State::kFailed:
      break;
  }
  return Status::Internal("multipart parser: no framing unit in this state");
}

Status ByteRangesParser::Feed(std::string_view in, const PartCallback& on_part) {
  if (state_ == State::kFailed) return failure_;
  while (true) {
    if (state_ == State::kDone) return Status::Ok();  // the epilogue is ignored
    if (state_ == State::kData) {
      const size_t take =
          static_cast<size_t>(std::min<uint64_t>(in.size(), part_range_.size() - part_.size()));
      part_.insert(part_.end(), in.begin(), in.begin() + static_cast<std::ptrdiff_t>(take));
      in.remove_prefix(take);
      if (part_.size() < part_range_.size()) return Status::Ok();  // `in` is used up
      ++parts_seen_;
      state_ = State::kAfterData;
      if (Status st = on_part(part_range_, part_); !st.ok()) return Fail(st);
      part_.clear();
      continue;
    }
    if (pending_.empty()) {
      auto used = Step(in);
      if (!used.ok()) return Fail(used.status());
      if (*used == 0) {
        pending_.assign(in);
        return Status::Ok();
      }
      in.remove_prefix(*used);
      continue;
    }
    // A framing unit straddles Feed calls: it is at most kMaxMultipartHeaderBytes plus a
    // delimiter line, so appending that much of `in` is always enough to finish it.
    const size_t old = pending_.size();
    const size_t cap = 2 * kMaxMultipartHeaderBytes + boundary_.size() + 16;
    const size_t take = std::min(in.size(), cap > old ? cap - old : 0);
    pending_.append(in.substr(0, take));
    auto used = Step(pending_);
    if (!used.ok()) return Fail(used.status());
    if (*used == 0) {
      if (take < in.size()) {
        return Fail(Status::Corruption("multipart body: malformed framing (no line end)"));
      }
      return Status::Ok();
    }
    // The unit was incomplete within the old pending bytes, so it ends inside `in`.
    if (*used <= old) return Fail(Status::Internal("multipart parser: framing went backwards"));
    in.remove_prefix(*used - old);
    pending_.clear();
  }
}

Status ByteRangesParser::Finish() const {
  switch (state_) {
    case State::kDone:
      return Status::Ok();
    case State::kFailed:
      return failure_;
    case State::kPreamble:
      return Status::Corruption("multipart body: truncated before its first boundary");
    case State::kData:
      return Status::Corruption(
          "multipart body: truncated inside part " + std::to_string(parts_seen_ + 1) + " (" +
          std::to_string(part_.size()) + " of " + std::to_string(part_range_.size()) + " bytes)");
    case State::kHeaders:
    case State::kAfterData:
      break;
  }
  return Status::Corruption("multipart body: truncated (no closing boundary after " +
                            std::to_string(parts_seen_) + " parts)");
}

}  // namespace xet
