#include "server/cache/recent_xorb_cache.h"

#include <algorithm>

#include "common/huge_pages.h"

namespace xet {
namespace {

// New buffers are sized up to a multiple of this, so a freed buffer fits the next xorb
// even when that one is a few bytes larger (full xorbs vary around 64 MiB).
constexpr size_t kCapacityStep = 4 << 20;

size_t RoundUpCapacity(size_t size) {
  return (size + kCapacityStep - 1) / kCapacityStep * kCapacityStep;
}

}  // namespace

RecentXorbCache::RecentXorbCache(size_t capacity_bytes) : capacity_bytes_(capacity_bytes) {}

void RecentXorbCache::Insert(const Hash& hash, std::span<const uint8_t> data) {
  if (capacity_bytes_ == 0 || data.empty() || data.size() > capacity_bytes_ / 2) return;
  std::shared_ptr<Slot> buffer;
  {
    MutexLock lock(mu_);
    if (entries_.contains(hash) || pending_.contains(hash)) return;
    buffer = ClaimBufferLocked(data.size());
    if (!buffer) return;
    pending_.insert(hash);
  }
  // assign() into reserved capacity copies once, without first zero-filling.
  buffer->bytes.assign(reinterpret_cast<const char*>(data.data()), data.size());
  MutexLock lock(mu_);
  pending_.erase(hash);
  lru_.push_front(hash);
  entries_.emplace(hash, Entry{std::move(buffer), lru_.begin()});
  bytes_ += data.size();
}

std::shared_ptr<const std::string> RecentXorbCache::Find(const Hash& hash) {
  MutexLock lock(mu_);
  auto it = entries_.find(hash);
  if (it == entries_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second.lru_pos);
  std::shared_ptr<Slot> slot = it->second.slot;
  slot->leases.fetch_add(1, std::memory_order_relaxed);  // ordered by mu_ against eviction
  // The lease keeps the slot alive (the cache may drop it meanwhile) and, when it ends,
  // publishes its reads to whoever next sees the count drop to zero.
  const std::string* bytes = &slot->bytes;
  return std::shared_ptr<const std::string>(bytes, [slot = std::move(slot)](const std::string*) {
    slot->leases.fetch_sub(1, std::memory_order_release);
  });
}

std::shared_ptr<RecentXorbCache::Slot> RecentXorbCache::ClaimBufferLocked(size_t size) {
  for (;;) {
    // The smallest free buffer that fits.
    auto fit = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if ((*it)->bytes.capacity() >= size &&
          (fit == free_.end() || (*it)->bytes.capacity() < (*fit)->bytes.capacity())) {
        fit = it;
      }
    }
    if (fit != free_.end()) {
      auto buffer = std::move(*fit);
      free_.erase(fit);
      buffer->bytes.clear();
      return buffer;
    }
    if (const size_t capacity = std::min(RoundUpCapacity(size), capacity_bytes_);
        owned_ + capacity <= capacity_bytes_) {
      auto buffer = std::make_shared<Slot>();
      buffer->bytes.reserve(capacity);
      AdviseHugePages(buffer->bytes.data(), buffer->bytes.capacity());
      owned_ += buffer->bytes.capacity();
      return buffer;
    }
    if (!free_.empty()) {
      // Free buffers too small for this xorb: give back the smallest, then retry.
      auto smallest = std::min_element(
          free_.begin(), free_.end(),
          [](const auto& a, const auto& b) { return a->bytes.capacity() < b->bytes.capacity(); });
      owned_ -= (*smallest)->bytes.capacity();
      free_.erase(smallest);
      continue;
    }
    if (!EvictOneLocked()) return nullptr;
  }
}

bool RecentXorbCache::EvictOneLocked() {
  if (lru_.empty()) return false;
  auto it = entries_.find(lru_.back());
  lru_.pop_back();
  std::shared_ptr<Slot> slot = std::move(it->second.slot);
  entries_.erase(it);
  bytes_ -= slot->bytes.size();
  if (slot->leases.load(std::memory_order_acquire) == 0) {
    free_.push_back(std::move(slot));  // no answer holds it: keep its memory for reuse
  } else {
    owned_ -= slot->bytes.capacity();  // an answer still sends it; freed when that ends
  }
  return true;
}

size_t RecentXorbCache::bytes() const {
  MutexLock lock(mu_);
  return bytes_;
}

size_t RecentXorbCache::entries() const {
  MutexLock lock(mu_);
  return entries_.size();
}

size_t RecentXorbCache::owned_bytes() const {
  MutexLock lock(mu_);
  return owned_;
}

}  // namespace xet
