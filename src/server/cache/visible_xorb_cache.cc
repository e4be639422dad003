#include "server/cache/visible_xorb_cache.h"

#include <string>

#include "format/sha256.h"

namespace xet {

VisibleXorbCache::VisibleXorbCache(size_t max_entries) : entries_(max_entries * kEntryBytes) {}

bool VisibleXorbCache::Contains(const Hash& xorb, std::span<const Scope> scopes) {
  return entries_.Find(KeyOf(xorb, scopes)) != nullptr;
}

void VisibleXorbCache::Insert(const Hash& xorb, std::span<const Scope> scopes) {
  entries_.Insert(KeyOf(xorb, scopes), present_, kEntryBytes);
}

Hash VisibleXorbCache::KeyOf(const Hash& xorb, std::span<const Scope> scopes) {
  std::string bytes(reinterpret_cast<const char*>(xorb.data()), Hash::kSize);
  for (const Scope& s : scopes) {
    bytes += s;
    bytes += '\n';
  }
  return Hash::FromArray(Sha256Of({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}));
}

}  // namespace xet
