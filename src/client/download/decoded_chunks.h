// DecodedChunks: decoded (uncompressed) xorb chunks held in memory, keyed by xorb hash and
// chunk index, so that data shared by several files, or read again, is fetched and decoded
// once. Bounded: least recently used chunks are dropped once their bytes exceed `max_bytes`
// (a chunk a reader still holds lives on with it).
//
// It also tracks the chunks being fetched: a fetcher Claim()s the chunks it will Put, and a
// reader that finds a chunk claimed Wait()s for it instead of fetching it again. Every claim
// ends with Put or Abandon (ChunkClaims does that on every path). Thread-safe.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/huge_pages.h"
#include "common/mutex.h"
#include "format/hash.h"

namespace xet {

class ChunkBufferPool;

// A decoded chunk's bytes: `size` of a buffer of `capacity` bytes, from a ChunkBufferPool
// (handed back to it when the chunk is destroyed) or allocated alone.
struct DecodedChunk {
  uint8_t* data = nullptr;
  uint32_t size = 0;
  uint32_t capacity = 0;
  std::shared_ptr<ChunkBufferPool> pool;
  DecodedChunk() = default;
  DecodedChunk(const DecodedChunk&) = delete;
  DecodedChunk& operator=(const DecodedChunk&) = delete;
  ~DecodedChunk();
  std::span<const uint8_t> span() const { return {data, size}; }
};
using ChunkPtr = std::shared_ptr<const DecodedChunk>;

// An uninitialized chunk of `size` bytes, to decode into, allocated alone.
std::shared_ptr<DecodedChunk> NewDecodedChunk(uint32_t size);

// Recycles chunk buffers, in size classes of kClassBytes, so that a reader's memory does not
// grow with the allocator's per-thread arenas (chunks are decoded on one thread and dropped
// on another) and new chunks reuse pages already faulted in.
//
// New buffers are carved from an arena of `arena_bytes` while it lasts, then taken from the
// allocator. The arena is one PageAlignedBuffer (common/huge_pages.h): on first touch it
// is faulted in 2 MiB pages rather than 4 KiB ones, which matters because page faults are
// costly in a VM (a cold 1 GB read through the mount took ~45,000 faults, a third of its
// CPU, before chunks came from an arena). Its pages stay resident once touched, until the
// pool is destroyed; arena buffers always go back on the free lists, whatever their total.
// Of the allocator's buffers the pool keeps at most `max_free_bytes` free.
// Under AddressSanitizer, free buffers and the untouched arena are poisoned (an access is
// reported). Thread-safe; create with std::make_shared (chunks hold a reference).
class ChunkBufferPool : public std::enable_shared_from_this<ChunkBufferPool> {
 public:
  static constexpr uint32_t kClassBytes = 16u << 10;
  explicit ChunkBufferPool(uint64_t max_free_bytes, uint64_t arena_bytes = 0)
      : max_free_bytes_(max_free_bytes), arena_(arena_bytes) {
    PoisonArena();
  }
  ~ChunkBufferPool();
  ChunkBufferPool(const ChunkBufferPool&) = delete;
  ChunkBufferPool& operator=(const ChunkBufferPool&) = delete;

  // An uninitialized chunk of `size` bytes (capacity: `size` rounded up to the class).
  std::shared_ptr<DecodedChunk> NewChunk(uint32_t size);
  // Takes back a buffer of `capacity` bytes (a multiple of kClassBytes).
  void Give(uint8_t* data, uint32_t capacity);

  // Bytes of free buffers held, arena buffers included.
  uint64_t free_bytes() const;
  // Bytes of the arena handed out so far (resident once written).
  uint64_t arena_used_bytes() const;

 private:
  void PoisonArena();
  bool InArena(const uint8_t* p) const;

  const uint64_t max_free_bytes_;
  const PageAlignedBuffer arena_;  // empty when arena_bytes is 0 or the mapping failed
  mutable Mutex mu_;
  uint64_t arena_used_ GUARDED_BY(mu_) = 0;
  std::unordered_map<uint32_t, std::vector<uint8_t*>> free_ GUARDED_BY(mu_);  // by capacity
  uint64_t free_bytes_ GUARDED_BY(mu_) = 0;                                   // all free buffers
  uint64_t heap_free_bytes_ GUARDED_BY(mu_) = 0;  // free buffers from the allocator
};

struct ChunkKey {
  Hash xorb;
  uint32_t chunk = 0;
  friend bool operator==(const ChunkKey&, const ChunkKey&) = default;
};
struct ChunkKeyHasher {
  size_t operator()(const ChunkKey& k) const noexcept {
    return HashHasher{}(k.xorb) ^ (size_t{k.chunk} * 0x9e3779b97f4a7c15ull);
  }
};

class DecodedChunks {
 public:
  explicit DecodedChunks(uint64_t max_bytes) : max_bytes_(max_bytes) {}

  // The chunk if held, else nullptr. `touch` marks it recently used (a sequential reader
  // does not: what it has read should go before the read-ahead it has not).
  ChunkPtr Get(const ChunkKey& key, bool touch = true);
  // Claims the chunk for fetching: true when it is neither held nor claimed.
  bool Claim(const ChunkKey& key);
  // Holds the chunk (replacing any) and ends its claim, if any.
  void Put(const ChunkKey& key, ChunkPtr chunk);
  // Ends the claim without a chunk (the fetch failed).
  void Abandon(const ChunkKey& key);
  // Waits while the chunk is claimed; then the chunk, or nullptr when it is not held (its
  // fetch failed, or it was dropped at once).
  ChunkPtr Wait(const ChunkKey& key);

  uint64_t bytes() const;
  size_t chunks() const;

 private:
  struct Entry {
    ChunkKey key;
    ChunkPtr chunk;
  };
  void Evict() REQUIRES(mu_);
  // The waiters of a chunk wait on its shard's condition variable: the end of a claim wakes
  // the readers of a few chunks, not every reader.
  static constexpr size_t kWaitShards = 64;
  CondVar& CvOf(const ChunkKey& key) { return cvs_[ChunkKeyHasher{}(key) % kWaitShards]; }

  const uint64_t max_bytes_;
  mutable Mutex mu_;
  CondVar cvs_[kWaitShards];              // a claim ended
  std::list<Entry> lru_ GUARDED_BY(mu_);  // most recently used first
  std::unordered_map<ChunkKey, std::list<Entry>::iterator, ChunkKeyHasher> index_ GUARDED_BY(mu_);
  std::unordered_set<ChunkKey, ChunkKeyHasher> claimed_ GUARDED_BY(mu_);
  uint64_t bytes_ GUARDED_BY(mu_) = 0;
};

// The claims of one fetch: Abandons, when destroyed, every claimed chunk not yet Put.
class ChunkClaims {
 public:
  explicit ChunkClaims(DecodedChunks& chunks) : chunks_(chunks) {}
  ~ChunkClaims();
  ChunkClaims(const ChunkClaims&) = delete;
  ChunkClaims& operator=(const ChunkClaims&) = delete;

  // Claims chunk `chunk` of `xorb`; true when it is now this object's.
  bool Claim(const Hash& xorb, uint32_t chunk);
  bool Holds(const Hash& xorb, uint32_t chunk) const;
  // Puts the chunk (claimed or not: a fetch may decode more than it claimed).
  void Put(const Hash& xorb, uint32_t chunk, ChunkPtr decoded);
  // Abandons every claim still open.
  void AbandonAll();

 private:
  DecodedChunks& chunks_;
  std::unordered_set<ChunkKey, ChunkKeyHasher> open_;  // claimed, not yet Put
};

}  // namespace xet
