// IndexRecordCache<Traits>: a bounded, thread-safe, read-through LRU cache of records read
// from the Index that never change once stored (content-addressed: xorb chunk tables, file
// records), so a cached record never goes stale and needs no invalidation. Access checks
// stay with the caller.
//
// Traits provides:
//   using Record = ...;
//   static Result<std::optional<Record>> Load(Index&, const Hash&);  // the Index read
//   static const Hash& Key(const Record&);                           // its content hash
//   static size_t Bytes(const Record&);                              // accounted size
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <utility>

#include "common/result.h"
#include "server/cache/record_lru.h"
#include "store/index.h"

namespace xet {

template <typename Traits>
class IndexRecordCache {
 public:
  using Record = typename Traits::Record;

  // `index` must outlive the cache. `capacity_bytes` bounds the memory of cached records
  // (0 keeps none: every Get reads the index).
  IndexRecordCache(Index& index, size_t capacity_bytes) : index_(index), lru_(capacity_bytes) {}

  // The record, from the cache or the index; nullptr when the index has none under `key`.
  Result<std::shared_ptr<const Record>> Get(const Hash& key) {
    if (auto hit = lru_.Find(key)) return hit;
    // Miss: read outside the lock so concurrent misses do not serialize on the database.
    XET_ASSIGN_OR_RETURN(std::optional<Record> record, Traits::Load(index_, key));
    if (!record) return std::shared_ptr<const Record>();
    auto shared = std::make_shared<const Record>(std::move(*record));
    lru_.Insert(key, shared, RecordBytes(*shared));
    return shared;
  }

  // Caches `record` as read from the index (warming at start), unless it is cached already
  // or larger than the capacity; evicts the least recently used beyond the capacity.
  void Insert(Record record) {
    const Hash key = Traits::Key(record);
    const size_t bytes = RecordBytes(record);
    lru_.Insert(key, std::make_shared<const Record>(std::move(record)), bytes);
  }

  // How many records are cached, their accounted bytes, and the bound on those.
  size_t size() const { return lru_.size(); }
  size_t bytes() const { return lru_.bytes(); }
  size_t capacity_bytes() const { return lru_.capacity_bytes(); }

  // The bytes a record is accounted for.
  static size_t RecordBytes(const Record& record) { return Traits::Bytes(record); }

 private:
  Index& index_;
  RecordLru<Record> lru_;
};

}  // namespace xet
