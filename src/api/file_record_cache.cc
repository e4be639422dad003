#include "api/file_record_cache.h"

#include <utility>

namespace xet {

FileRecordCache::FileRecordCache(Index& index, size_t capacity_bytes)
    : index_(index), lru_(capacity_bytes) {}

Result<std::shared_ptr<const FileRecord>> FileRecordCache::Get(const Hash& file_hash) {
  if (auto hit = lru_.Find(file_hash)) return hit;
  XET_ASSIGN_OR_RETURN(auto rec, index_.GetFile(file_hash));
  if (!rec) return std::shared_ptr<const FileRecord>();
  auto shared = std::make_shared<const FileRecord>(std::move(*rec));
  lru_.Insert(file_hash, shared, RecordBytes(*shared));
  return shared;
}

void FileRecordCache::Insert(FileRecord record) {
  const Hash key = record.file_hash;
  const size_t bytes = RecordBytes(record);
  lru_.Insert(key, std::make_shared<const FileRecord>(std::move(record)), bytes);
}

size_t FileRecordCache::RecordBytes(const FileRecord& record) {
  return sizeof(FileRecord) + record.terms.size() * sizeof(FileTerm);
}

}  // namespace xet
