#include "api/xorb_record_cache.h"

namespace xet {

XorbRecordCache::XorbRecordCache(Index& index, size_t capacity_bytes)
    : index_(index), capacity_bytes_(capacity_bytes) {}

Result<std::shared_ptr<const XorbRecord>> XorbRecordCache::Get(const Hash& xorb_hash) {
  {
    std::lock_guard lock(mu_);
    auto it = entries_.find(xorb_hash);
    if (it != entries_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.lru_pos);
      return it->second.record;
    }
  }
  // Miss: read outside the lock so concurrent misses do not serialize on the database.
  XET_ASSIGN_OR_RETURN(auto rec, index_.GetXorb(xorb_hash));
  if (!rec) return std::shared_ptr<const XorbRecord>();
  auto shared = std::make_shared<const XorbRecord>(std::move(*rec));
  const size_t bytes = sizeof(XorbRecord) + shared->chunks.size() * sizeof(XorbChunkRow);

  std::lock_guard lock(mu_);
  if (entries_.contains(xorb_hash) || bytes > capacity_bytes_) return shared;
  lru_.push_front(xorb_hash);
  entries_.emplace(xorb_hash, Entry{shared, lru_.begin(), bytes});
  bytes_ += bytes;
  while (bytes_ > capacity_bytes_ && !lru_.empty()) {
    auto victim = entries_.find(lru_.back());
    bytes_ -= victim->second.bytes;
    entries_.erase(victim);
    lru_.pop_back();
  }
  return shared;
}

size_t XorbRecordCache::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

}  // namespace xet
