// Object keys: the naming scheme of stored xorbs and shards, and the key grammar every
// ObjectStore enforces.
#include <string>
#include <string_view>

#include "store/object_store.h"

namespace xet {
namespace {

bool IsKeyChar(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '_' || c == '.' || c == '-';
}

}  // namespace

Status ValidateObjectKey(std::string_view key) {
  auto reject = [&](std::string_view why) {
    return Status::InvalidArgument("invalid object key \"" + std::string(key) +
                                   "\": " + std::string(why));
  };
  if (key.empty()) return reject("empty");
  if (key.size() > 1024) return reject("longer than 1024 characters");
  size_t start = 0;
  while (true) {
    const size_t slash = key.find('/', start);
    const std::string_view seg =
        key.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (seg.empty()) return reject(start == 0 ? "absolute or empty segment" : "empty segment");
    if (seg.front() == '.') return reject("segment starts with '.'");
    for (char c : seg) {
      if (!IsKeyChar(c)) return reject("character outside [0-9a-z_./-]");
    }
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return Status::Ok();
}

std::string XorbKey(const Hash& xorb_hash) {
  const std::string hex = xorb_hash.ToHex();
  std::string key;
  key.reserve(6 + 3 + hex.size());
  key.append("xorbs/").append(hex, 0, 2).append("/").append(hex);
  return key;
}

std::string ShardKey(const Hash& shard_hash) { return "shards/" + shard_hash.ToHex(); }

}  // namespace xet
