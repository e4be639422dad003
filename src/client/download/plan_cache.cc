#include "client/download/plan_cache.h"

#include <algorithm>
#include <string>
#include <utility>

namespace xet {

PlanCache::PlanCache(Fetch fetch, size_t max_entries, std::chrono::steady_clock::duration ttl,
                     Clock clock)
    : fetch_(std::move(fetch)),
      max_entries_(std::max<size_t>(1, max_entries)),
      ttl_(ttl),
      clock_(clock ? std::move(clock) : Clock([] { return std::chrono::steady_clock::now(); })) {}

bool PlanCache::Valid(const Slot& s) const { return !s.ready || clock_() - s.started < ttl_; }

Result<std::shared_ptr<const FilePlan>> PlanCache::Get(const Hash& file, uint64_t size) {
  std::shared_ptr<Slot> slot;
  {
    MutexLock lock(mu_);
    auto it = slots_.find(file);
    if (it != slots_.end() && !Valid(*it->second)) {
      Drop(file);
      it = slots_.end();
    }
    if (it != slots_.end()) {
      slot = it->second;
      lru_.splice(lru_.begin(), lru_, slot->lru);
      while (!slot->ready) cv_.Wait(mu_);
      if (!slot->error.ok()) return slot->error;
      if (slot->plan->size() != size) {
        return Status::InvalidArgument("file " + file.ToHex() + " read as " + std::to_string(size) +
                                       " bytes, its plan has " +
                                       std::to_string(slot->plan->size()));
      }
      return slot->plan;
    }
    slot = std::make_shared<Slot>();
    slot->started = clock_();
    lru_.push_front(file);
    slot->lru = lru_.begin();
    slots_.emplace(file, slot);
    ++requests_;
    Evict();
  }
  Result<std::shared_ptr<const FilePlan>> result =
      [&]() -> Result<std::shared_ptr<const FilePlan>> {
    XET_ASSIGN_OR_RETURN(Reconstruction recon, fetch_(file));
    XET_ASSIGN_OR_RETURN(FilePlan plan, FilePlan::Build(std::move(recon), size));
    return std::make_shared<const FilePlan>(std::move(plan));
  }();
  {
    MutexLock lock(mu_);
    slot->ready = true;
    if (result.ok()) {
      slot->plan = *result;
    } else {
      slot->error = result.status();
      auto it = slots_.find(file);
      if (it != slots_.end() && it->second == slot) Drop(file);
    }
    Evict();
  }
  cv_.NotifyAll();
  return result;
}

bool PlanCache::Has(const Hash& file) {
  MutexLock lock(mu_);
  auto it = slots_.find(file);
  return it != slots_.end() && Valid(*it->second);
}

void PlanCache::Forget(const Hash& file) {
  MutexLock lock(mu_);
  Drop(file);
}

void PlanCache::Refused(const Hash& file, const std::shared_ptr<const FilePlan>& plan) {
  MutexLock lock(mu_);
  auto it = slots_.find(file);
  if (it != slots_.end() && it->second->ready && it->second->plan == plan) Drop(file);
}

void PlanCache::Drop(const Hash& file) {
  auto it = slots_.find(file);
  if (it == slots_.end()) return;
  lru_.erase(it->second->lru);
  slots_.erase(it);
}

void PlanCache::Evict() {
  // Least recently used first; fetches in flight stay (their waiters hold them).
  auto it = lru_.end();
  while (slots_.size() > max_entries_ && it != lru_.begin()) {
    --it;
    const Slot& s = *slots_.at(*it);
    if (!s.ready) continue;
    const Hash victim = *it;
    it = std::next(it);  // Drop erases the element `it` pointed at
    Drop(victim);
  }
}

uint64_t PlanCache::requests() const {
  MutexLock lock(mu_);
  return requests_;
}

size_t PlanCache::size() const {
  MutexLock lock(mu_);
  return slots_.size();
}

}  // namespace xet
