#include "client/download/plan_cache.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <thread>
#include <vector>

#include "common/mutex.h"

namespace xet {
namespace {

using std::chrono::minutes;
using std::chrono::steady_clock;

Hash H(uint8_t b) {
  std::array<uint8_t, 32> a{};
  a[0] = b;
  return Hash::FromArray(a);
}

// A one-term answer for a file of 100 bytes.
Reconstruction OneTerm(const Hash& file) {
  Reconstruction r;
  r.terms = {{file, 0, 1, 100, {}}};
  r.xorbs.push_back({file, {FetchEntry{"u", {{0, 1, 0, 99, {}}}}}});
  return r;
}

struct Fixture {
  std::atomic<int> calls{0};
  steady_clock::time_point now = steady_clock::time_point() + minutes(1);
  PlanCache::Fetch fetch = [this](const Hash& f) -> Result<Reconstruction> {
    ++calls;
    return OneTerm(f);
  };
  PlanCache::Clock clock = [this] { return now; };
};

TEST(PlanCache, OneRequestWhileValidThenRefetchedAfterTtl) {
  Fixture fx;
  PlanCache cache(fx.fetch, 10, minutes(50), fx.clock);
  auto a = cache.Get(H(1), 100);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto b = cache.Get(H(1), 100);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(a->get(), b->get());
  EXPECT_EQ(fx.calls.load(), 1);
  fx.now += minutes(49);
  ASSERT_TRUE(cache.Get(H(1), 100).ok());
  EXPECT_EQ(fx.calls.load(), 1);
  EXPECT_TRUE(cache.Has(H(1)));
  fx.now += minutes(1);  // 50 minutes after the fetch started: expired
  EXPECT_FALSE(cache.Has(H(1)));
  auto c = cache.Get(H(1), 100);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(c->get(), a->get());
  EXPECT_EQ(fx.calls.load(), 2);
  EXPECT_EQ(cache.requests(), 2u);
}

TEST(PlanCache, KeepsTheMostRecentlyUsedPlans) {
  Fixture fx;
  PlanCache cache(fx.fetch, 2, minutes(50), fx.clock);
  ASSERT_TRUE(cache.Get(H(1), 100).ok());
  ASSERT_TRUE(cache.Get(H(2), 100).ok());
  ASSERT_TRUE(cache.Get(H(1), 100).ok());  // 1 is now more recent than 2
  ASSERT_TRUE(cache.Get(H(3), 100).ok());  // drops 2
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_TRUE(cache.Has(H(1)));
  EXPECT_FALSE(cache.Has(H(2)));
  EXPECT_TRUE(cache.Has(H(3)));
  EXPECT_EQ(fx.calls.load(), 3);
  ASSERT_TRUE(cache.Get(H(2), 100).ok());
  EXPECT_EQ(fx.calls.load(), 4);
}

TEST(PlanCache, ConcurrentGetsShareOneFetch) {
  Mutex mu;
  CondVar cv;
  bool release = false;
  std::atomic<int> calls{0};
  PlanCache cache(
      [&](const Hash& f) -> Result<Reconstruction> {
        ++calls;
        MutexLock lock(mu);
        while (!release) cv.Wait(mu);
        return OneTerm(f);
      },
      10, minutes(50));
  std::vector<const FilePlan*> got(8, nullptr);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i) {
    threads.emplace_back([&, i] {
      auto p = cache.Get(H(1), 100);
      if (p.ok()) got[i] = p->get();
    });
  }
  while (calls.load() == 0) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let the others queue up
  {
    MutexLock lock(mu);
    release = true;
  }
  cv.NotifyAll();
  for (auto& t : threads) t.join();
  EXPECT_EQ(calls.load(), 1);
  for (const FilePlan* p : got) {
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p, got[0]);
  }
}

TEST(PlanCache, ErrorsAreNotCached) {
  int calls = 0;
  PlanCache cache(
      [&](const Hash& f) -> Result<Reconstruction> {
        if (++calls == 1) return Status::Unavailable("down");
        return OneTerm(f);
      },
      10, minutes(50));
  auto a = cache.Get(H(1), 100);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), Status::Code::kUnavailable);
  EXPECT_FALSE(cache.Has(H(1)));
  EXPECT_TRUE(cache.Get(H(1), 100).ok());
  EXPECT_EQ(calls, 2);
  // A plan that does not fit the size is refused, and not cached either.
  auto bad = cache.Get(H(2), 101);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Status::Code::kCorruption);
  EXPECT_FALSE(cache.Has(H(2)));
  // A cached plan read with another size.
  EXPECT_EQ(cache.Get(H(1), 50).status().code(), Status::Code::kInvalidArgument);
}

TEST(PlanCache, ForgetAndRefused) {
  Fixture fx;
  PlanCache cache(fx.fetch, 10, minutes(50), fx.clock);
  auto a = cache.Get(H(1), 100);
  ASSERT_TRUE(a.ok());
  cache.Forget(H(1));
  EXPECT_FALSE(cache.Has(H(1)));
  auto b = cache.Get(H(1), 100);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(fx.calls.load(), 2);
  cache.Refused(H(1), *a);  // an older plan: the current one stays
  EXPECT_TRUE(cache.Has(H(1)));
  cache.Refused(H(1), *b);
  EXPECT_FALSE(cache.Has(H(1)));
  ASSERT_TRUE(cache.Get(H(1), 100).ok());
  EXPECT_EQ(fx.calls.load(), 3);
}

}  // namespace
}  // namespace xet
