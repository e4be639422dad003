// Mutex, MutexLock, MutexUnlock and CondVar: std::mutex and std::condition_variable with
// clang's thread-safety annotations (common/thread_annotations.h), which libstdc++'s types
// lack. Members a mutex protects are declared GUARDED_BY(mu_), and the clang build
// (-Wthread-safety) rejects any access without it.
//
// Each is a thin inline wrapper: a Mutex is a std::mutex, a CondVar a std::condition_variable
// waiting on that std::mutex, so the generated code is the standard library's.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "common/thread_annotations.h"

namespace xet {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  // Takes the mutex if it is free; returns whether it did.
  bool TryLock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // Tells the analysis the caller holds the mutex (in code it cannot follow, e.g. a
  // callback). Not checked at run time: std::mutex does not know its owner.
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds `mu` from construction to destruction.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~MutexLock() RELEASE() { mu_.Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

// The inverse: releases a held `mu` for its scope (e.g. around a slow call made under a
// MutexLock) and takes it again on destruction.
class SCOPED_CAPABILITY MutexUnlock {
 public:
  explicit MutexUnlock(Mutex& mu) RELEASE(mu) : mu_(mu) { mu_.Unlock(); }
  ~MutexUnlock() RELEASE() { mu_.Lock(); }  // clang models a scoped unlock's end as RELEASE
  MutexUnlock(const MutexUnlock&) = delete;
  MutexUnlock& operator=(const MutexUnlock&) = delete;

 private:
  Mutex& mu_;
};

// A condition variable waited on with a held Mutex. The waits have no predicate form (the
// analysis cannot see a lambda run under the lock): callers loop, as in
//   while (!ready_) cv_.Wait(mu_);
// Each wait may wake spuriously; `mu` is held again when it returns.
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  void Wait(Mutex& mu) REQUIRES(mu) {
    Adopted lock(mu);
    cv_.wait(lock.lock);
  }
  // Returns std::cv_status::timeout once `deadline` has passed.
  template <typename Clock, typename Duration>
  std::cv_status WaitUntil(Mutex& mu, const std::chrono::time_point<Clock, Duration>& deadline)
      REQUIRES(mu) {
    Adopted lock(mu);
    return cv_.wait_until(lock.lock, deadline);
  }
  template <typename Rep, typename Period>
  std::cv_status WaitFor(Mutex& mu, const std::chrono::duration<Rep, Period>& timeout)
      REQUIRES(mu) {
    Adopted lock(mu);
    return cv_.wait_for(lock.lock, timeout);
  }

  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

 private:
  // A std::unique_lock over a Mutex the caller already holds, which it leaves held (even if
  // the wait throws): ownership stays with the caller's MutexLock.
  struct Adopted {
    explicit Adopted(Mutex& mu) : lock(mu.mu_, std::adopt_lock) {}
    ~Adopted() { lock.release(); }
    Adopted(const Adopted&) = delete;
    Adopted& operator=(const Adopted&) = delete;
    std::unique_lock<std::mutex> lock;
  };

  std::condition_variable cv_;
};

}  // namespace xet
