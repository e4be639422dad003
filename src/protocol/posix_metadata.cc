#include "protocol/posix_metadata.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "protocol/base64.h"

namespace xet {
namespace {

using nlohmann::json;

Status Bad(std::string_view why) { return Status::InvalidArgument("posix: " + std::string(why)); }

// Whether `s` is valid UTF-8 (shortest forms, no surrogates): JSON strings must be.
bool ValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += len;
  }
  return true;
}

// A non-negative integer field no larger than `max`.
Result<uint64_t> UintField(const json& j, const char* field, uint64_t max, bool* present) {
  const auto it = j.find(field);
  *present = it != j.end() && !it->is_null();
  if (!*present) return uint64_t{0};
  uint64_t v = 0;
  if (it->is_number_unsigned()) {
    v = it->get<uint64_t>();
  } else if (it->is_number_integer()) {
    const int64_t s = it->get<int64_t>();
    if (s < 0) return Bad(std::string("\"") + field + "\" must not be negative");
    v = static_cast<uint64_t>(s);
  } else {
    return Bad(std::string("\"") + field + "\" must be an integer");
  }
  if (v > max) {
    return Bad(std::string("\"") + field + "\" must be at most " + std::to_string(max));
  }
  return v;
}

// Nesting depth of the arrays and objects of JSON text, or SIZE_MAX when it exceeds
// `limit` (strings are skipped, escapes included).
size_t JsonDepthBeyond(std::string_view text, size_t limit) {
  size_t depth = 0;
  size_t max_depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > limit) return std::numeric_limits<size_t>::max();
      max_depth = std::max(max_depth, depth);
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return max_depth;
}

}  // namespace

Status ValidatePosix(const PosixMetadata& p) {
  const uint32_t type = p.type();
  if (type != kPosixRegular && type != kPosixDirectory && type != kPosixSymlink && !p.IsSpecial()) {
    return Bad(
        "\"mode\" must have the type bits of a regular file (0100000), a directory "
        "(0040000), a symbolic link (0120000), a FIFO (0010000), a socket (0140000) or a "
        "character (0020000) or block (0060000) device");
  }
  if ((p.mode & ~(kPosixTypeMask | kPosixPermissionMask)) != 0) {
    return Bad("\"mode\" has bits outside the type and 07777");
  }
  if (type == kPosixSymlink) {
    if (p.target.empty() || p.target.size() > kMaxSymlinkTargetBytes) {
      return Bad("a symbolic link needs a \"target\" of 1 to 4095 bytes");
    }
    if (p.target.find('\0') != std::string::npos) return Bad("\"target\" must not contain NUL");
    if (!ValidUtf8(p.target)) return Bad("\"target\" must be valid UTF-8");
  } else if (!p.target.empty()) {
    return Bad("\"target\" is only for symbolic links");
  }
  if (p.rdev != 0 && !p.IsDevice()) return Bad("\"rdev\" is only for device nodes");
  if (p.atime_ms < 0 || p.atime_ms > kMaxPosixTimeMs) {
    return Bad("\"atime\" must be between 0 and 253402300799999 (unix milliseconds)");
  }
  if (p.xattrs.size() > kMaxXattrs) return Bad("at most 64 \"xattrs\"");
  size_t encoded = 160;  // the fixed fields, generously
  for (size_t i = 0; i < p.xattrs.size(); ++i) {
    const auto& [name, value] = p.xattrs[i];
    if (name.empty() || name.size() > kMaxXattrNameBytes) {
      return Bad("xattr names must be 1 to 255 bytes");
    }
    if (name.find('\0') != std::string::npos || !ValidUtf8(name)) {
      return Bad("xattr names must be valid UTF-8 without NUL");
    }
    if (i > 0 && !(p.xattrs[i - 1].first < name)) {
      return Bad("xattr names must be sorted and unique");
    }
    if (value.size() > kMaxXattrValueBytes) {
      return Bad("xattr \"" + name + "\" is larger than 65536 bytes");
    }
    encoded += name.size() * 6 + 4 * ((value.size() + 2) / 3) + 6;
  }
  if (encoded + p.target.size() * 6 > kMaxPosixJsonBytes &&
      EncodePosixJson(p).size() > kMaxPosixJsonBytes) {
    return Bad("the posix object is larger than 131072 bytes");
  }
  return Status::Ok();
}

Result<PosixMetadata> PosixFromJson(const json& j) {
  if (!j.is_object()) return Bad("must be an object");
  PosixMetadata p;
  bool present = false;
  XET_ASSIGN_OR_RETURN(const uint64_t mode, UintField(j, "mode", 0177777, &present));
  if (!present) return Bad("missing \"mode\"");
  p.mode = static_cast<uint32_t>(mode);
  XET_ASSIGN_OR_RETURN(const uint64_t uid,
                       UintField(j, "uid", std::numeric_limits<uint32_t>::max(), &present));
  if (!present) return Bad("missing \"uid\"");
  p.uid = static_cast<uint32_t>(uid);
  XET_ASSIGN_OR_RETURN(const uint64_t gid,
                       UintField(j, "gid", std::numeric_limits<uint32_t>::max(), &present));
  if (!present) return Bad("missing \"gid\"");
  p.gid = static_cast<uint32_t>(gid);
  XET_ASSIGN_OR_RETURN(const uint64_t atime, UintField(j, "atime", kMaxPosixTimeMs, &present));
  p.atime_ms = static_cast<int64_t>(atime);
  XET_ASSIGN_OR_RETURN(const uint64_t rdev, UintField(j, "rdev", kMaxPosixRdev, &present));
  if (present && !p.IsDevice()) return Bad("\"rdev\" is only for device nodes");
  p.rdev = static_cast<uint32_t>(rdev);
  if (auto it = j.find("target"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) return Bad("\"target\" must be a string");
    const auto& s = it->get_ref<const std::string&>();
    if (s.size() > kMaxSymlinkTargetBytes) return Bad("\"target\" is longer than 4095 bytes");
    p.target = s;
  }
  if (auto it = j.find("xattrs"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) return Bad("\"xattrs\" must be an object of base64 strings");
    if (it->size() > kMaxXattrs) return Bad("at most 64 \"xattrs\"");
    p.xattrs.reserve(it->size());
    for (const auto& [name, value] : it->items()) {  // std::map: sorted, unique
      if (!value.is_string()) return Bad("xattr \"" + name + "\" must be a base64 string");
      const auto& text = value.get_ref<const std::string&>();
      if (text.size() > 4 * ((kMaxXattrValueBytes + 2) / 3)) {
        return Bad("xattr \"" + name + "\" is larger than 65536 bytes");
      }
      auto bytes = Base64Decode(text);
      if (!bytes) return Bad("xattr \"" + name + "\" is not padded base64");
      p.xattrs.emplace_back(name, std::move(*bytes));
    }
  }
  XET_RETURN_IF_ERROR(ValidatePosix(p));
  return p;
}

json PosixToJson(const PosixMetadata& p) {
  json j = json::object();
  j["mode"] = p.mode;
  j["uid"] = p.uid;
  j["gid"] = p.gid;
  if (p.atime_ms != 0) j["atime"] = p.atime_ms;
  if (!p.target.empty()) j["target"] = p.target;
  if (p.IsDevice()) j["rdev"] = p.rdev;
  if (!p.xattrs.empty()) {
    json x = json::object();
    for (const auto& [name, value] : p.xattrs) x[name] = Base64Encode(value);
    j["xattrs"] = std::move(x);
  }
  return j;
}

std::string EncodePosixJson(const PosixMetadata& p) {
  // Invalid UTF-8 (only in metadata that failed ValidatePosix) is replaced, never thrown.
  return PosixToJson(p).dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<PosixMetadata> DecodePosixJson(std::string_view text) {
  if (text.size() > kMaxPosixJsonBytes) return Bad("the posix object is larger than 131072 bytes");
  if (JsonDepthBeyond(text, 2) > 2) return Bad("the posix object nests too deep");
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Bad("not valid JSON");
  return PosixFromJson(j);
}

}  // namespace xet
