#include "protocol/bucket_path.h"

#include <cstdint>

namespace xet {
namespace {

bool NameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

// Length of the UTF-8 sequence starting at s[i] if it is well formed (no overlongs, no
// surrogates, at most U+10FFFF), else 0.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t c = b(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  uint32_t cp = 0;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

}  // namespace

Status ValidateBucketName(std::string_view name, std::string_view what) {
  const std::string w(what);
  if (name.empty()) return Status::InvalidArgument(w + " is empty");
  if (name.size() > kMaxBucketNameBytes) {
    return Status::InvalidArgument(w + " is longer than " + std::to_string(kMaxBucketNameBytes) +
                                   " characters");
  }
  for (char c : name) {
    if (!NameChar(c)) {
      return Status::InvalidArgument(w + " '" + std::string(name) +
                                     "' may only contain letters, digits, '.', '_' and '-'");
    }
  }
  if (name.front() == '.' || name.front() == '-' || name.back() == '.' || name.back() == '-') {
    return Status::InvalidArgument(w + " '" + std::string(name) +
                                   "' may not start or end with '.' or '-'");
  }
  if (name.find("..") != std::string_view::npos) {
    return Status::InvalidArgument(w + " '" + std::string(name) + "' may not contain '..'");
  }
  return Status::Ok();
}

Status ValidateBucketPath(std::string_view path) {
  if (path.empty()) return Status::InvalidArgument("path is empty");
  if (path.size() > kMaxBucketPathBytes) {
    return Status::InvalidArgument("path is longer than " + std::to_string(kMaxBucketPathBytes) +
                                   " bytes");
  }
  for (size_t i = 0; i < path.size();) {
    const auto c = static_cast<uint8_t>(path[i]);
    if (c < 0x20 || c == 0x7F) {
      return Status::InvalidArgument("path may not contain NUL or control characters");
    }
    if (c == '\\') return Status::InvalidArgument("path may not contain '\\'");
    const size_t n = Utf8SequenceLength(path, i);
    if (n == 0) return Status::InvalidArgument("path is not valid UTF-8");
    i += n;
  }
  if (path.front() == '/') return Status::InvalidArgument("path may not start with '/'");
  if (path.back() == '/') return Status::InvalidArgument("path may not end with '/'");
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view segment = path.substr(start, end - start);
    if (segment.empty()) return Status::InvalidArgument("path may not contain '//'");
    if (segment == "." || segment == "..") {
      return Status::InvalidArgument("path may not contain '.' or '..' segments");
    }
    start = end + 1;
  }
  return Status::Ok();
}

Result<std::string> NormalizeBucketPrefix(std::string_view prefix) {
  if (prefix.empty()) return std::string();
  if (prefix.back() == '/') prefix.remove_suffix(1);
  if (prefix.empty()) return std::string();  // "/" is the root
  XET_RETURN_IF_ERROR(ValidateBucketPath(prefix).WithContext("prefix"));
  return std::string(prefix);
}

Status ValidateBucketFullName(std::string_view full_name) {
  const size_t slash = full_name.find('/');
  if (slash == std::string_view::npos) {
    return Status::InvalidArgument("bucket id must be NAMESPACE/BUCKET");
  }
  XET_RETURN_IF_ERROR(ValidateBucketName(full_name.substr(0, slash), "namespace"));
  return ValidateBucketName(full_name.substr(slash + 1), "bucket name");
}

}  // namespace xet
