#include "client/download/decoded_chunks.h"

#include <sanitizer/asan_interface.h>  // no-op macros outside ASan builds

#include <algorithm>
#include <utility>

namespace xet {
namespace {

// Bookkeeping per held chunk (list node, index node, control block), counted with its bytes.
constexpr uint64_t kDecodedChunkOverhead = 128;

uint64_t Charge(const ChunkPtr& c) { return uint64_t{c->capacity} + kDecodedChunkOverhead; }

}  // namespace

DecodedChunk::~DecodedChunk() {
  if (pool) {
    pool->Give(data, capacity);
  } else {
    delete[] data;
  }
}

std::shared_ptr<DecodedChunk> NewDecodedChunk(uint32_t size) {
  auto c = std::make_shared<DecodedChunk>();
  c->data = new uint8_t[size];
  c->size = size;
  c->capacity = size;
  return c;
}

void ChunkBufferPool::PoisonArena() {
  if (arena_.data() != nullptr) ASAN_POISON_MEMORY_REGION(arena_.data(), arena_.size());
}

bool ChunkBufferPool::InArena(const uint8_t* p) const {
  const auto a = reinterpret_cast<uintptr_t>(p);
  const auto base = reinterpret_cast<uintptr_t>(arena_.data());
  return arena_.data() != nullptr && a >= base && a - base < arena_.size();
}

ChunkBufferPool::~ChunkBufferPool() {
  MutexLock lock(mu_);
  for (auto& [capacity, list] : free_) {
    for (uint8_t* p : list) {
      ASAN_UNPOISON_MEMORY_REGION(p, capacity);
      if (!InArena(p)) delete[] p;  // arena buffers go with its mapping
    }
  }
  if (arena_.data() != nullptr) ASAN_UNPOISON_MEMORY_REGION(arena_.data(), arena_.size());
}

std::shared_ptr<DecodedChunk> ChunkBufferPool::NewChunk(uint32_t size) {
  uint32_t capacity = std::max<uint32_t>(1, (size + kClassBytes - 1) / kClassBytes) * kClassBytes;
  uint8_t* data = nullptr;
  {
    // The size's class, else a free buffer up to two classes larger (chunk sizes vary: a
    // pool of one class only would rarely serve the next chunk).
    MutexLock lock(mu_);
    for (uint32_t c = capacity; data == nullptr && c <= capacity + 2 * kClassBytes;
         c += kClassBytes) {
      auto it = free_.find(c);
      if (it == free_.end() || it->second.empty()) continue;
      data = it->second.back();
      it->second.pop_back();
      free_bytes_ -= c;
      if (!InArena(data)) heap_free_bytes_ -= c;
      capacity = c;
      ASAN_UNPOISON_MEMORY_REGION(data, c);
    }
    if (data == nullptr && capacity <= arena_.size() - arena_used_) {
      data = arena_.data() + arena_used_;
      arena_used_ += capacity;
      ASAN_UNPOISON_MEMORY_REGION(data, capacity);
    }
  }
  if (data == nullptr) data = new uint8_t[capacity];
  auto c = std::make_shared<DecodedChunk>();
  c->data = data;
  c->size = size;
  c->capacity = capacity;
  c->pool = shared_from_this();
  return c;
}

void ChunkBufferPool::Give(uint8_t* data, uint32_t capacity) {
  {
    MutexLock lock(mu_);
    const bool from_arena = InArena(data);
    if (from_arena || heap_free_bytes_ + capacity <= max_free_bytes_) {
      ASAN_POISON_MEMORY_REGION(data, capacity);
      free_[capacity].push_back(data);
      free_bytes_ += capacity;
      if (!from_arena) heap_free_bytes_ += capacity;
      return;
    }
  }
  delete[] data;
}

uint64_t ChunkBufferPool::free_bytes() const {
  MutexLock lock(mu_);
  return free_bytes_;
}

uint64_t ChunkBufferPool::arena_used_bytes() const {
  MutexLock lock(mu_);
  return arena_used_;
}

ChunkPtr DecodedChunks::Get(const ChunkKey& key, bool touch) {
  MutexLock lock(mu_);
  auto it = index_.find(key);
  if (it == index_.end()) return nullptr;
  if (touch) lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->chunk;
}

bool DecodedChunks::Claim(const ChunkKey& key) {
  MutexLock lock(mu_);
  if (index_.contains(key)) return false;
  return claimed_.insert(key).second;
}

void DecodedChunks::Put(const ChunkKey& key, ChunkPtr chunk) {
  {
    MutexLock lock(mu_);
    claimed_.erase(key);
    auto it = index_.find(key);
    if (it != index_.end()) {
      bytes_ -= Charge(it->second->chunk);
      bytes_ += Charge(chunk);
      it->second->chunk = std::move(chunk);
      lru_.splice(lru_.begin(), lru_, it->second);
    } else {
      bytes_ += Charge(chunk);
      lru_.push_front(Entry{key, std::move(chunk)});
      index_.emplace(key, lru_.begin());
    }
    Evict();
  }
  CvOf(key).NotifyAll();
}

void DecodedChunks::Abandon(const ChunkKey& key) {
  {
    MutexLock lock(mu_);
    claimed_.erase(key);
  }
  CvOf(key).NotifyAll();
}

ChunkPtr DecodedChunks::Wait(const ChunkKey& key) {
  MutexLock lock(mu_);
  CondVar& cv = CvOf(key);
  while (claimed_.contains(key)) cv.Wait(mu_);
  auto it = index_.find(key);
  if (it == index_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->chunk;
}

void DecodedChunks::Evict() {
  while (bytes_ > max_bytes_ && !lru_.empty()) {
    Entry& victim = lru_.back();
    bytes_ -= Charge(victim.chunk);
    index_.erase(victim.key);
    lru_.pop_back();
  }
}

uint64_t DecodedChunks::bytes() const {
  MutexLock lock(mu_);
  return bytes_;
}

size_t DecodedChunks::chunks() const {
  MutexLock lock(mu_);
  return index_.size();
}

ChunkClaims::~ChunkClaims() { AbandonAll(); }

bool ChunkClaims::Claim(const Hash& xorb, uint32_t chunk) {
  const ChunkKey key{xorb, chunk};
  if (!chunks_.Claim(key)) return false;
  open_.insert(key);
  return true;
}

bool ChunkClaims::Holds(const Hash& xorb, uint32_t chunk) const {
  return open_.contains(ChunkKey{xorb, chunk});
}

void ChunkClaims::Put(const Hash& xorb, uint32_t chunk, ChunkPtr decoded) {
  const ChunkKey key{xorb, chunk};
  open_.erase(key);
  chunks_.Put(key, std::move(decoded));
}

void ChunkClaims::AbandonAll() {
  for (const ChunkKey& k : open_) chunks_.Abandon(k);
  open_.clear();
}

}  // namespace xet
