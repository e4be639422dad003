#include "server/cache/answer_cache.h"

namespace xet {

AnswerCache::AnswerCache(size_t capacity_bytes, int64_t min_url_lifetime_s)
    : capacity_bytes_(capacity_bytes), min_url_lifetime_s_(min_url_lifetime_s) {}

std::shared_ptr<const CachedAnswer> AnswerCache::Get(const std::string& key, int64_t now) {
  MutexLock lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  if (it->second.answer->urls_expire_at - now < min_url_lifetime_s_) {
    EraseLocked(it);
    return nullptr;
  }
  lru_.splice(lru_.begin(), lru_, it->second.lru_pos);
  return it->second.answer;
}

void AnswerCache::Put(const std::string& key, std::shared_ptr<const CachedAnswer> answer) {
  if (answer == nullptr || answer->bytes > capacity_bytes_ / 4) return;
  MutexLock lock(mu_);
  if (auto it = entries_.find(key); it != entries_.end()) EraseLocked(it);
  bytes_ += answer->bytes;
  lru_.push_front(key);
  entries_.emplace(key, Entry{std::move(answer), lru_.begin()});
  while (bytes_ > capacity_bytes_ && !lru_.empty()) EraseLocked(entries_.find(lru_.back()));
}

void AnswerCache::Clear() {
  MutexLock lock(mu_);
  entries_.clear();
  lru_.clear();
  bytes_ = 0;
}

size_t AnswerCache::bytes() const {
  MutexLock lock(mu_);
  return bytes_;
}

void AnswerCache::EraseLocked(std::unordered_map<std::string, Entry>::iterator it) {
  bytes_ -= it->second.answer->bytes;
  lru_.erase(it->second.lru_pos);
  entries_.erase(it);
}

}  // namespace xet
