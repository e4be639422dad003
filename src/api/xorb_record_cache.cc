#include "api/xorb_record_cache.h"

#include <utility>

namespace xet {

XorbRecordCache::XorbRecordCache(Index& index, size_t capacity_bytes)
    : index_(index), lru_(capacity_bytes) {}

Result<std::shared_ptr<const XorbRecord>> XorbRecordCache::Get(const Hash& xorb_hash) {
  if (auto hit = lru_.Find(xorb_hash)) return hit;
  // Miss: read outside the lock so concurrent misses do not serialize on the database.
  XET_ASSIGN_OR_RETURN(auto rec, index_.GetXorb(xorb_hash));
  if (!rec) return std::shared_ptr<const XorbRecord>();
  auto shared = std::make_shared<const XorbRecord>(std::move(*rec));
  lru_.Insert(xorb_hash, shared, RecordBytes(*shared));
  return shared;
}

void XorbRecordCache::Insert(XorbRecord record) {
  const Hash key = record.hash;
  const size_t bytes = RecordBytes(record);
  lru_.Insert(key, std::make_shared<const XorbRecord>(std::move(record)), bytes);
}

size_t XorbRecordCache::RecordBytes(const XorbRecord& record) {
  return sizeof(XorbRecord) + record.chunks.size() * sizeof(XorbChunkRow);
}

}  // namespace xet
