// RecentXorbCache: the chunk data of recently uploaded xorbs, kept in memory so the
// downloads that typically follow an upload (a CI job publishing a checkpoint that a fleet
// then pulls, a client checking what it just wrote) are served without reading the disk.
//
// Xorbs are written to the object store without passing through the page cache (which on
// the VMs this project targets costs more CPU than the upload itself), so without this
// cache the first download of a new xorb reads it back from the device, sharing the
// device's bandwidth with whatever the client writes. Content addressing makes entries
// immutable: no invalidation is ever needed, and an entry may be served to any client the
// caller has already authorized. The caller must insert exactly the bytes stored for the
// xorb (its chunk data), and nothing deletes xorbs today; a garbage collector that does
// must also stop serving them from here.
//
// Memory: the cache owns at most `capacity_bytes` of buffer capacity, counting both live
// entries and evicted buffers it keeps for reuse. An evicted buffer that no answer still
// holds is reused for the next insert instead of being freed, so a busy server keeps one
// arena of faulted-in memory rather than allocating (and page-faulting) 64 MiB per xorb.
// Thread-safe.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/mutex.h"
#include "format/hash.h"

namespace xet {

class RecentXorbCache {
 public:
  // 0 disables the cache: Insert keeps nothing and Find always misses.
  explicit RecentXorbCache(size_t capacity_bytes);

  RecentXorbCache(const RecentXorbCache&) = delete;
  RecentXorbCache& operator=(const RecentXorbCache&) = delete;

  // Keeps a copy of `data`, the chunk data of xorb `hash`, evicting least recently used
  // entries to stay within the capacity. Does nothing when `hash` is already cached or
  // `data` is empty or larger than half the capacity (one xorb must not flush the rest).
  // The copy is made outside the lock.
  void Insert(const Hash& hash, std::span<const uint8_t> data);

  // The cached chunk data of `hash` (marked most recently used), or nullptr. The bytes stay
  // valid and unchanged for as long as the returned pointer (a lease) is held, even after
  // eviction: an evicted buffer is reused only once every lease on it has ended.
  std::shared_ptr<const std::string> Find(const Hash& hash);

  size_t capacity_bytes() const { return capacity_bytes_; }
  // Bytes of cached chunk data.
  size_t bytes() const;
  size_t entries() const;
  // Capacity owned: cached entries' buffers plus evicted buffers kept for reuse.
  size_t owned_bytes() const;

 private:
  // One buffer and the number of Find results (leases) reading it. A lease ends with a
  // release decrement and eviction reads the count with acquire, so a buffer is rewritten
  // only after the reads of every lease on it. (shared_ptr::use_count() is a relaxed load:
  // reusing a buffer when it reads 1 raced with the last reader's reads of the bytes.)
  struct Slot {
    std::string bytes;
    std::atomic<uint32_t> leases{0};
  };
  struct Entry {
    std::shared_ptr<Slot> slot;
    std::list<Hash>::iterator lru_pos;
  };
  // A buffer for `size` bytes: a reused one (evicting entries as needed), a fresh one, or
  // nullptr when the capacity cannot make room.
  std::shared_ptr<Slot> ClaimBufferLocked(size_t size) REQUIRES(mu_);
  // Moves the least recently used entry out; its buffer goes to the free list if no answer
  // holds it, else it is released. False when there is nothing to evict.
  bool EvictOneLocked() REQUIRES(mu_);

  const size_t capacity_bytes_;
  mutable Mutex mu_;
  std::list<Hash> lru_ GUARDED_BY(mu_);  // front = most recently used
  std::unordered_map<Hash, Entry, HashHasher> entries_ GUARDED_BY(mu_);
  std::vector<std::shared_ptr<Slot>> free_ GUARDED_BY(mu_);  // no leases, capacity kept
  size_t bytes_ GUARDED_BY(mu_) = 0;                         // sum of entries' sizes
  size_t owned_ GUARDED_BY(mu_) = 0;  // sum of capacities of entries' and free buffers
  // Hashes an Insert is copying in (outside the lock); their buffers count in owned_.
  std::unordered_set<Hash, HashHasher> pending_ GUARDED_BY(mu_);
};

}  // namespace xet
