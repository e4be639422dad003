// Unit tests for the annotated lock wrappers of common/mutex.h: Mutex and MutexLock exclude
// other threads for exactly their scope, MutexUnlock frees the mutex for its scope only,
// and CondVar waits release the mutex, wake on notification, time out, and return with
// the mutex held again.
#include "common/mutex.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

namespace xet {
namespace {

// Whether another thread can take `mu` right now.
bool FreeForAnotherThread(Mutex& mu) {
  bool took = false;
  std::thread([&] {
    if (mu.TryLock()) {
      took = true;
      mu.Unlock();
    }
  }).join();
  return took;
}

TEST(Mutex, LockAndTryLockExcludeOtherThreads) {
  Mutex mu;
  EXPECT_TRUE(FreeForAnotherThread(mu));
  mu.Lock();
  EXPECT_FALSE(FreeForAnotherThread(mu));
  mu.Unlock();
  ASSERT_TRUE(mu.TryLock());
  mu.AssertHeld();  // no run-time effect
  EXPECT_FALSE(FreeForAnotherThread(mu));
  mu.Unlock();
  EXPECT_TRUE(FreeForAnotherThread(mu));
}

TEST(MutexLock, HoldsTheMutexForItsScope) {
  Mutex mu;
  {
    MutexLock lock(mu);
    EXPECT_FALSE(FreeForAnotherThread(mu));
    {
      MutexUnlock unlocked(mu);
      EXPECT_TRUE(FreeForAnotherThread(mu));
    }
    EXPECT_FALSE(FreeForAnotherThread(mu));
  }
  EXPECT_TRUE(FreeForAnotherThread(mu));
}

TEST(MutexLock, SerializesIncrementsFromManyThreads) {
  struct Counter {
    Mutex mu;
    int value GUARDED_BY(mu) = 0;
  } counter;
  constexpr int kThreads = 8, kIncrements = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIncrements; ++i) {
        MutexLock lock(counter.mu);
        counter.value = counter.value + 1;  // a read then a write: lost updates if unguarded
      }
    });
  }
  for (std::thread& t : threads) t.join();
  MutexLock lock(counter.mu);
  EXPECT_EQ(counter.value, kThreads * kIncrements);
}

struct Handoff {
  Mutex mu;
  CondVar cv;
  int ready GUARDED_BY(mu) = 0;
  int woken GUARDED_BY(mu) = 0;
};

TEST(CondVar, WaitReleasesTheMutexAndWakesOnNotify) {
  Handoff h;
  std::thread notifier([&] {
    MutexLock lock(h.mu);  // if the waiter is first, only once its Wait released the mutex
    h.ready = 1;
    h.cv.NotifyOne();
  });
  {
    MutexLock lock(h.mu);
    while (h.ready == 0) h.cv.Wait(h.mu);
    EXPECT_EQ(h.ready, 1);
    EXPECT_FALSE(FreeForAnotherThread(h.mu));  // held again after the wait
  }
  notifier.join();
}

TEST(CondVar, NotifyAllWakesEveryWaiter) {
  Handoff h;
  constexpr int kWaiters = 4;
  std::vector<std::thread> waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.emplace_back([&] {
      MutexLock lock(h.mu);
      while (h.ready == 0) h.cv.Wait(h.mu);
      ++h.woken;
    });
  }
  {
    MutexLock lock(h.mu);
    h.ready = 1;
    h.cv.NotifyAll();
  }
  for (std::thread& t : waiters) t.join();
  MutexLock lock(h.mu);
  EXPECT_EQ(h.woken, kWaiters);
}

TEST(CondVar, TimedWaitsTimeOutWithTheMutexHeld) {
  Handoff h;
  MutexLock lock(h.mu);
  const auto start = std::chrono::steady_clock::now();
  std::cv_status status = std::cv_status::no_timeout;
  while (status == std::cv_status::no_timeout) {  // a spurious wake-up is no_timeout
    status = h.cv.WaitFor(h.mu, std::chrono::milliseconds(20));
  }
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(20));
  EXPECT_FALSE(FreeForAnotherThread(h.mu));
  EXPECT_EQ(h.cv.WaitUntil(h.mu, std::chrono::steady_clock::now() - std::chrono::seconds(1)),
            std::cv_status::timeout);
  EXPECT_FALSE(FreeForAnotherThread(h.mu));
}

}  // namespace
}  // namespace xet
