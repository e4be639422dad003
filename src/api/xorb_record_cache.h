// XorbRecordCache: a bounded, thread-safe LRU cache of xorb chunk tables read from the
// Index. Xorbs are content-addressed and immutable, so cached records never go stale.
// Reconstruction answers touch up to thousands of xorbs per request; the cache keeps the
// hot tables in memory instead of re-reading ~40 KiB blobs from the database each time.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "common/result.h"
#include "store/index.h"

namespace xet {

class XorbRecordCache {
 public:
  // `index` must outlive the cache. `capacity_bytes` bounds the memory of cached tables.
  XorbRecordCache(Index& index, size_t capacity_bytes);

  // The record, from the cache or the index; nullptr when the xorb is unknown.
  Result<std::shared_ptr<const XorbRecord>> Get(const Hash& xorb_hash);

  // How many records are cached (for tests).
  size_t size() const;

 private:
  struct Entry {
    std::shared_ptr<const XorbRecord> record;
    std::list<Hash>::iterator lru_pos;
    size_t bytes = 0;
  };

  Index& index_;
  const size_t capacity_bytes_;
  mutable std::mutex mu_;
  std::list<Hash> lru_;  // front = most recently used
  std::unordered_map<Hash, Entry> entries_;
  size_t bytes_ = 0;
};

}  // namespace xet
