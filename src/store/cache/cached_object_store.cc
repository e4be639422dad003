#include "store/cache/cached_object_store.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "store/local/local_object_store.h"

namespace xet {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Keys remembered as too large to copy (so their reads skip the remote size lookup); the set
// starts over when it reaches this many.
constexpr size_t kMaxUncacheableKeys = 4096;

// After a copy fails for another reason than a deleted object (a full or broken cache disk,
// the remote store failing), reads go to the remote store without copying for this long,
// rather than each paying for a copy that fails again.
constexpr int64_t kPauseAfterFailureNs = 5'000'000'000;

class CachedObjectStore final : public ObjectStore, public ObjectCache {
 public:
  CachedObjectStore(std::unique_ptr<ObjectStore> remote, std::unique_ptr<LocalObjectStore> local,
                    const ObjectCacheOptions& options)
      : remote_(std::move(remote)),
        local_(std::move(local)),
        capacity_(options.capacity_bytes),
        max_object_(options.max_object_bytes != 0 ? options.max_object_bytes
                                                  : options.capacity_bytes / 4),
        max_fills_(options.max_fills),
        touch_interval_ns_(options.touch_interval_s * 1'000'000'000) {}

  // Indexes the copies in the local store and evicts down to the capacity.
  Status Load() {
    std::vector<std::pair<std::string, uint64_t>> found;
    XET_RETURN_IF_ERROR(local_->List("", [&](std::string_view key, uint64_t size) {
      found.emplace_back(std::string(key), size);
      return Status::Ok();
    }));
    std::vector<std::string> victims;
    {
      MutexLock lock(mu_);
      for (auto& [key, size] : found) {
        struct stat st {};
        if (::stat(PathOf(key).c_str(), &st) != 0) continue;  // gone meanwhile
        const int64_t mtime =
            static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
        slots_[key] = Slot{size, mtime, mtime};
        by_access_.emplace(mtime, key);
        cached_bytes_ += size;
      }
      EvictLocked(0, &victims);
    }
    DeleteCopies(victims);
    return Status::Ok();
  }

  Result<bool> Put(std::string_view key, std::span<const uint8_t> data) override {
    return remote_->Put(key, data);
  }
  Result<bool> PutParts(std::string_view key,
                        std::span<const std::span<const uint8_t>> parts) override {
    return remote_->PutParts(key, parts);
  }

  Result<uint64_t> Size(std::string_view key) override {
    XET_RETURN_IF_ERROR(ValidateObjectKey(key));
    if (Lookup(key)) {
      auto size = local_->Size(key);
      if (size.ok() || size.status().code() != Status::Code::kNotFound) return size;
      Forget(key);
    }
    return remote_->Size(key);
  }

  Status ReadRange(std::string_view key, uint64_t offset, std::span<uint8_t> out) override {
    XET_RETURN_IF_ERROR(ValidateObjectKey(key));
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (Lookup(key)) {
        Status read = local_->ReadRange(key, offset, out);
        if (read.code() != Status::Code::kNotFound) return Hit(std::move(read));
        Forget(key);  // removed behind the cache's back (or evicted meanwhile)
      }
      if (attempt == 0) {
        Status copied = EnsureCopied(key);
        if (copied.code() == Status::Code::kNotFound) return copied;
        if (!copied.ok()) break;
      }
    }
    Bypass();
    return remote_->ReadRange(key, offset, out);
  }

  Result<std::vector<uint8_t>> Get(std::string_view key) override {
    XET_RETURN_IF_ERROR(ValidateObjectKey(key));
    if (Lookup(key)) {
      auto bytes = local_->Get(key);
      if (bytes.ok()) hits_.fetch_add(1, std::memory_order_relaxed);
      if (bytes.ok() || bytes.status().code() != Status::Code::kNotFound) return bytes;
      Forget(key);
    }
    return remote_->Get(key);
  }

  Result<UniqueFd> OpenFile(std::string_view key) override {
    XET_RETURN_IF_ERROR(ValidateObjectKey(key));
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (Lookup(key)) {
        auto file = local_->OpenFile(key);
        if (file.ok()) {
          hits_.fetch_add(1, std::memory_order_relaxed);
          return file;
        }
        if (file.status().code() != Status::Code::kNotFound) return file.status();
        Forget(key);
      }
      if (attempt == 0) {
        Status copied = EnsureCopied(key);
        if (copied.code() == Status::Code::kNotFound) return copied;
        if (!copied.ok()) break;
      }
    }
    Bypass();
    return Status::Unimplemented("object " + std::string(key) + " is not in the local cache");
  }

  Status Delete(std::string_view key) override {
    XET_RETURN_IF_ERROR(remote_->Delete(key));
    {
      MutexLock lock(mu_);
      if (auto f = flights_.find(std::string(key)); f != flights_.end()) f->second->discard = true;
      if (auto s = slots_.find(std::string(key)); s != slots_.end()) EraseLocked(s);
    }
    Status removed = local_->Delete(key);
    if (removed.code() == Status::Code::kNotFound) return Status::Ok();
    return removed;
  }

  Status List(std::string_view prefix,
              const std::function<Status(std::string_view key, uint64_t size)>& visit) override {
    return remote_->List(prefix, visit);
  }

  ObjectCacheStats Stats() const override {
    ObjectCacheStats s;
    s.hits = hits_.load(std::memory_order_relaxed);
    s.bypasses = bypasses_.load(std::memory_order_relaxed);
    MutexLock lock(mu_);
    s.fills = fills_;
    s.fill_bytes = fill_bytes_;
    s.fill_errors = fill_errors_;
    s.evictions = evictions_;
    s.entries = slots_.size();
    s.bytes = cached_bytes_;
    return s;
  }

 private:
  struct Slot {
    uint64_t bytes = 0;
    int64_t last_access_ns = 0;
    int64_t persisted_ns = 0;  // the access time last written to the file's mtime
  };
  // One copy in flight; its readers wait for `done`.
  struct Flight {
    bool done = false;
    bool discard = false;  // the object was deleted meanwhile: do not keep the copy
    Status status;
  };

  std::string PathOf(std::string_view key) const { return local_->root() + "/" + std::string(key); }

  // Whether `key` has a copy (marking it used now). Refreshes the file's mtime, the access
  // order a restart sees, when the last refresh is older than the touch interval.
  bool Lookup(std::string_view key) {
    const int64_t now = NowNs();
    bool persist = false;
    {
      MutexLock lock(mu_);
      auto it = slots_.find(std::string(key));
      if (it == slots_.end()) return false;
      Slot& slot = it->second;
      by_access_.erase({slot.last_access_ns, it->first});
      slot.last_access_ns = now;
      by_access_.emplace(now, it->first);
      if (now - slot.persisted_ns >= touch_interval_ns_) {
        slot.persisted_ns = now;
        persist = true;
      }
    }
    // Best effort: a lost refresh only makes the copy look older after a restart.
    if (persist) ::utimensat(AT_FDCWD, PathOf(key).c_str(), nullptr, 0);
    return true;
  }

  void Forget(std::string_view key) {
    MutexLock lock(mu_);
    if (auto it = slots_.find(std::string(key)); it != slots_.end()) EraseLocked(it);
  }

  Status Hit(Status read) {
    if (read.ok()) hits_.fetch_add(1, std::memory_order_relaxed);
    return read;
  }
  void Bypass() { bypasses_.fetch_add(1, std::memory_order_relaxed); }

  void EraseLocked(std::unordered_map<std::string, Slot>::iterator it) REQUIRES(mu_) {
    by_access_.erase({it->second.last_access_ns, it->first});
    cached_bytes_ -= it->second.bytes;
    slots_.erase(it);
  }

  // Drops least recently used copies from the index until `incoming` more bytes fit within
  // the capacity; the caller deletes the files named in *victims after unlocking. False when
  // they cannot fit even with every copy gone.
  bool EvictLocked(uint64_t incoming, std::vector<std::string>* victims) REQUIRES(mu_) {
    while (cached_bytes_ + reserved_bytes_ + incoming > capacity_ && !by_access_.empty()) {
      auto oldest = slots_.find(by_access_.begin()->second);
      victims->push_back(oldest->first);
      EraseLocked(oldest);
      ++evictions_;
    }
    return cached_bytes_ + reserved_bytes_ + incoming <= capacity_;
  }

  void DeleteCopies(const std::vector<std::string>& keys) {
    // A copy that cannot be deleted is no longer indexed either; it is found again (and
    // counted) at the next open.
    for (const std::string& key : keys) (void)local_->Delete(key);
  }

  // Makes sure `key` has a copy: copies it in, or waits for the copy in flight. OK when it
  // has one now; the remote store's NotFound; Unimplemented when it is not copied (too
  // large, the copies in flight at their limit, the copy failed).
  Status EnsureCopied(std::string_view key_view) {
    const std::string key(key_view);
    std::shared_ptr<Flight> flight;
    {
      MutexLock lock(mu_);
      if (slots_.contains(key)) return Status::Ok();
      if (uncacheable_.contains(key)) return Status::Unimplemented("object too large to cache");
      if (auto it = flights_.find(key); it != flights_.end()) {
        flight = it->second;
        while (!flight->done) flight_done_.Wait(mu_);
        return flight->status;
      }
      if (flights_.size() >= max_fills_) return Status::Unimplemented("object cache busy");
      if (NowNs() < paused_until_ns_) return Status::Unimplemented("object cache paused");
      flight = std::make_shared<Flight>();
      flights_.emplace(key, flight);
    }
    Status status = Copy(key, *flight);
    MutexLock lock(mu_);
    flights_.erase(key);
    flight->done = true;
    flight->status = status;
    flight_done_.NotifyAll();
    return status;
  }

  // Copies the object in (the leader of its flight).
  Status Copy(const std::string& key, const Flight& flight) {
    auto size = remote_->Size(key);
    if (!size.ok()) return size.status();
    std::vector<std::string> victims;
    bool fits;
    {
      MutexLock lock(mu_);
      if (*size > max_object_) {
        if (uncacheable_.size() >= kMaxUncacheableKeys) uncacheable_.clear();
        uncacheable_.insert(key);
        return Status::Unimplemented("object too large to cache");
      }
      fits = EvictLocked(*size, &victims);
      if (fits) reserved_bytes_ += *size;
    }
    DeleteCopies(victims);
    if (!fits) return Status::Unimplemented("object does not fit in the cache");
    ObjectStore& remote = *remote_;
    auto stored = local_->PutFrom(key, *size, [&](uint64_t offset, std::span<uint8_t> out) {
      return remote.ReadRange(key, offset, out);
    });
    bool discard = false;
    {
      MutexLock lock(mu_);
      reserved_bytes_ -= *size;
      if (!stored.ok()) {
        ++fill_errors_;
        if (stored.status().code() != Status::Code::kNotFound) {
          paused_until_ns_ = NowNs() + kPauseAfterFailureNs;
        }
      } else if (flight.discard) {
        discard = true;
      } else {
        const int64_t now = NowNs();
        slots_[key] = Slot{*size, now, now};
        by_access_.emplace(now, key);
        cached_bytes_ += *size;
        ++fills_;
        fill_bytes_ += *size;
      }
    }
    if (!stored.ok()) {
      // The remote store's NotFound (deleted meanwhile) is the reader's answer too; other
      // failures leave the read to the remote store.
      if (stored.status().code() == Status::Code::kNotFound) return stored.status();
      return Status::Unimplemented("copy failed: " + stored.status().message());
    }
    if (discard) {
      (void)local_->Delete(key);
      return Status::NotFound("object " + key + " was deleted while being cached");
    }
    return Status::Ok();
  }

  const std::unique_ptr<ObjectStore> remote_;
  const std::unique_ptr<LocalObjectStore> local_;
  const uint64_t capacity_;
  const uint64_t max_object_;
  const size_t max_fills_;
  const int64_t touch_interval_ns_;

  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> bypasses_{0};

  mutable Mutex mu_;
  CondVar flight_done_;
  std::unordered_map<std::string, Slot> slots_ GUARDED_BY(mu_);
  std::set<std::pair<int64_t, std::string>> by_access_ GUARDED_BY(mu_);  // oldest first
  std::unordered_map<std::string, std::shared_ptr<Flight>> flights_ GUARDED_BY(mu_);
  std::unordered_set<std::string> uncacheable_ GUARDED_BY(mu_);
  uint64_t cached_bytes_ GUARDED_BY(mu_) = 0;
  uint64_t reserved_bytes_ GUARDED_BY(mu_) = 0;
  uint64_t fills_ GUARDED_BY(mu_) = 0;
  uint64_t fill_bytes_ GUARDED_BY(mu_) = 0;
  uint64_t fill_errors_ GUARDED_BY(mu_) = 0;
  uint64_t evictions_ GUARDED_BY(mu_) = 0;
  int64_t paused_until_ns_ GUARDED_BY(mu_) = 0;
};

}  // namespace

Result<std::unique_ptr<ObjectStore>> OpenCachedObjectStore(std::unique_ptr<ObjectStore> remote,
                                                           const ObjectCacheOptions& options) {
  if (remote == nullptr) return Status::InvalidArgument("object cache: no store to cache");
  if (options.dir.empty()) return Status::InvalidArgument("object cache: no directory");
  if (options.capacity_bytes == 0) return Status::InvalidArgument("object cache: capacity 0");
  if (options.max_fills == 0) return Status::InvalidArgument("object cache: max_fills 0");
  if (options.touch_interval_s < 0)
    return Status::InvalidArgument("object cache: negative touch interval");
  XET_ASSIGN_OR_RETURN(auto local, LocalObjectStore::Open(options.dir));
  auto store = std::make_unique<CachedObjectStore>(std::move(remote), std::move(local), options);
  XET_RETURN_IF_ERROR(store->Load());
  return std::unique_ptr<ObjectStore>(std::move(store));
}

const ObjectCache* AsObjectCache(const ObjectStore& store) {
  return dynamic_cast<const ObjectCache*>(&store);
}

}  // namespace xet
