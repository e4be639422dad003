#include "store/bucket_keys.h"

namespace xet {
namespace {

int CursorHexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string BucketFullName(std::string_view ns, std::string_view name) {
  std::string s(ns);
  s.push_back('/');
  s.append(name);
  return s;
}

std::optional<std::pair<std::string_view, std::string_view>> SplitBucketFullName(
    std::string_view full) {
  const size_t slash = full.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  return std::make_pair(full.substr(0, slash), full.substr(slash + 1));
}

Status BucketNotFound(std::string_view ns, std::string_view name) {
  return Status::NotFound("bucket " + BucketFullName(ns, name) + " not found");
}

std::pair<std::string, std::string> BucketListingStart(std::string_view after) {
  if (auto split = SplitBucketFullName(after)) {
    return {std::string(split->first), std::string(split->second)};
  }
  if (after.empty()) return {};
  return {std::string(after), "\x7f"};
}

BucketRecord NewBucketRecord(std::string ns, std::string name, bool is_private, int64_t now_ms) {
  BucketRecord b;
  b.ns = std::move(ns);
  b.name = std::move(name);
  b.is_private = is_private;
  b.created_at_ms = now_ms;
  b.updated_at_ms = now_ms;
  return b;
}

BucketOpResult BucketOpFailed(std::string error) {
  BucketOpResult r;
  r.ok = false;
  r.error = std::move(error);
  return r;
}

BucketOpResult BucketOpDone(uint64_t changed) {
  BucketOpResult r;
  r.entries_changed = changed;
  return r;
}

std::string EncodeTreeCursor(const TreeCursor& c) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string raw;
  raw.reserve(c.path.size() + 1);
  raw.push_back(c.after_directory ? 'd' : 'f');
  raw.append(c.path);
  std::string out;
  out.reserve(raw.size() * 2);
  for (unsigned char ch : raw) {
    out.push_back(kHex[ch >> 4]);
    out.push_back(kHex[ch & 0xf]);
  }
  return out;
}

Result<TreeCursor> DecodeTreeCursor(std::string_view text) {
  const Status bad = Status::InvalidArgument("malformed listing cursor");
  if (text.size() < 4 || text.size() % 2 != 0) return bad;
  std::string raw;
  raw.reserve(text.size() / 2);
  for (size_t i = 0; i < text.size(); i += 2) {
    const int hi = CursorHexValue(text[i]);
    const int lo = CursorHexValue(text[i + 1]);
    if (hi < 0 || lo < 0) return bad;
    raw.push_back(static_cast<char>(hi * 16 + lo));
  }
  if (raw[0] != 'f' && raw[0] != 'd') return bad;
  return TreeCursor{raw[0] == 'd', raw.substr(1)};
}

}  // namespace xet
