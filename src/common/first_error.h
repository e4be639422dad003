// FirstError: the first failure of a group of threads working on one job. Each thread
// reports what went wrong with Set(); only the first non-OK Status is kept (later ones
// are usually consequences of it, e.g. "cancelled"), and failed() tells every thread,
// without a lock, that the job is over and they should stop. Thread-safe.
#pragma once

#include <atomic>
#include <utility>

#include "common/mutex.h"
#include "common/status.h"

namespace xet {

class FirstError {
 public:
  FirstError() = default;
  FirstError(const FirstError&) = delete;
  FirstError& operator=(const FirstError&) = delete;

  // Keeps `status` if it is the first non-OK one; an OK status is ignored. Returns whether
  // `status` was kept. Once it returns, failed() is true on every thread.
  bool Set(Status status) {
    if (status.ok()) return false;
    MutexLock lock(mu_);
    const bool first = status_.ok();
    if (first) status_ = std::move(status);
    failed_.store(true, std::memory_order_release);
    return first;
  }

  // Whether a failure was set. Lock-free: cheap enough to ask between two chunks.
  bool failed() const { return failed_.load(std::memory_order_acquire); }

  // The first failure, or OK when there was none.
  Status status() const {
    MutexLock lock(mu_);
    return status_;
  }

 private:
  mutable Mutex mu_;
  Status status_ GUARDED_BY(mu_);
  std::atomic<bool> failed_{false};  // set (under mu_) once status_ is not OK
};

}  // namespace xet
