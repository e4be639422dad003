// FileRecordCache: a bounded, thread-safe LRU cache of decoded file records (a file's
// terms) read from the Index. File records are content-addressed and never change once
// registered, so a cached record never goes stale. A 100,000-term file is a 4.4 MB blob:
// without the cache every reconstruction request, ranged ones included, reads and decodes
// it again. Access checks stay with the caller.
#pragma once

#include <cstddef>
#include <memory>

#include "api/record_lru.h"
#include "common/result.h"
#include "store/index.h"

namespace xet {

class FileRecordCache {
 public:
  // `index` must outlive the cache. `capacity_bytes` bounds the memory of cached records
  // (0 keeps none: every Get reads the index).
  FileRecordCache(Index& index, size_t capacity_bytes);

  // The record, from the cache or the index; nullptr when the file is not registered.
  Result<std::shared_ptr<const FileRecord>> Get(const Hash& file_hash);

  // Caches `record` as read from the index (warming at start), unless it is cached already
  // or larger than the capacity; evicts the least recently used beyond the capacity.
  void Insert(FileRecord record);

  size_t size() const { return lru_.size(); }
  size_t bytes() const { return lru_.bytes(); }
  size_t capacity_bytes() const { return lru_.capacity_bytes(); }

  // The bytes a record is accounted for.
  static size_t RecordBytes(const FileRecord& record);

 private:
  Index& index_;
  RecordLru<FileRecord> lru_;
};

}  // namespace xet
