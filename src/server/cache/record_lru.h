// RecordLru: a bounded, thread-safe LRU map from a content hash to a shared, read-only
// record. For records that never change once stored (xorb chunk tables, file records are
// content-addressed), so a cached record never goes stale and needs no invalidation.
// The caller states each record's size; the map holds at most capacity_bytes of them.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <unordered_map>

#include "common/mutex.h"
#include "format/hash.h"

namespace xet {

template <typename Record>
class RecordLru {
 public:
  explicit RecordLru(size_t capacity_bytes) : capacity_bytes_(capacity_bytes) {}

  // The record under `key` (now the most recently used), or nullptr.
  std::shared_ptr<const Record> Find(const Hash& key) {
    MutexLock lock(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second.lru_pos);
    return it->second.record;
  }

  // Keeps `record` (of `bytes`) under `key` as the most recently used, evicting the least
  // recently used ones beyond the capacity. Does nothing if `key` is present already or
  // `bytes` exceeds the whole capacity.
  void Insert(const Hash& key, std::shared_ptr<const Record> record, size_t bytes) {
    MutexLock lock(mu_);
    if (entries_.contains(key) || bytes > capacity_bytes_) return;
    lru_.push_front(key);
    entries_.emplace(key, Entry{std::move(record), lru_.begin(), bytes});
    bytes_ += bytes;
    while (bytes_ > capacity_bytes_ && !lru_.empty()) {
      auto victim = entries_.find(lru_.back());
      bytes_ -= victim->second.bytes;
      entries_.erase(victim);
      lru_.pop_back();
    }
  }

  size_t size() const {
    MutexLock lock(mu_);
    return entries_.size();
  }
  size_t bytes() const {
    MutexLock lock(mu_);
    return bytes_;
  }
  size_t capacity_bytes() const { return capacity_bytes_; }

 private:
  struct Entry {
    std::shared_ptr<const Record> record;
    std::list<Hash>::iterator lru_pos;
    size_t bytes = 0;
  };

  const size_t capacity_bytes_;
  mutable Mutex mu_;
  std::list<Hash> lru_ GUARDED_BY(mu_);  // front = most recently used
  std::unordered_map<Hash, Entry> entries_ GUARDED_BY(mu_);
  size_t bytes_ GUARDED_BY(mu_) = 0;
};

}  // namespace xet
