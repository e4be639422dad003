// XorbRecordCache: a bounded, thread-safe LRU cache of xorb chunk tables read from the
// Index. Xorbs are content-addressed and immutable, so cached records never go stale.
// Reconstruction answers touch up to thousands of xorbs per request; the cache keeps the
// hot tables in memory instead of re-reading ~40 KiB blobs from the database each time.
#pragma once

#include <cstddef>
#include <memory>

#include "api/record_lru.h"
#include "common/result.h"
#include "store/index.h"

namespace xet {

class XorbRecordCache {
 public:
  // `index` must outlive the cache. `capacity_bytes` bounds the memory of cached tables.
  XorbRecordCache(Index& index, size_t capacity_bytes);

  // The record, from the cache or the index; nullptr when the xorb is unknown.
  Result<std::shared_ptr<const XorbRecord>> Get(const Hash& xorb_hash);

  // Caches `record` as read from the index (warming at start), unless it is cached already
  // or larger than the capacity; evicts the least recently used beyond the capacity.
  void Insert(XorbRecord record);

  // How many records are cached, their accounted bytes, and the bound on those.
  size_t size() const { return lru_.size(); }
  size_t bytes() const { return lru_.bytes(); }
  size_t capacity_bytes() const { return lru_.capacity_bytes(); }

  // The bytes a record is accounted for.
  static size_t RecordBytes(const XorbRecord& record);

 private:
  Index& index_;
  RecordLru<XorbRecord> lru_;
};

}  // namespace xet
