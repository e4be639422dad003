// FsyncGroup: every caller is covered by a sync that started after its call, concurrent
// callers share syncs, and a failed sync fails exactly the callers of its round.
#include "store/local/fsync_group.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace xet {
namespace {

TEST(FsyncGroupTest, ALoneCallerSyncsOnce) {
  int syncs = 0;
  FsyncGroup group([&] {
    ++syncs;
    return Status::Ok();
  });
  EXPECT_TRUE(group.Sync().ok());
  EXPECT_TRUE(group.Sync().ok());
  EXPECT_EQ(syncs, 2);  // no caller reuses a sync that started before it
}

TEST(FsyncGroupTest, ConcurrentCallersShareSyncsAndAreAllCovered) {
  // "changes" stands for entries linked into the directory; a sync makes the changes made
  // before it started durable.
  std::atomic<int> changes{0};
  std::atomic<int> durable{0};
  std::atomic<int> syncs{0};
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  FsyncGroup group([&] {
    const int seen = changes.load();
    if (syncs++ == 0) {  // the first sync is slow: everyone else arrives while it runs
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return release; });
    }
    int prev = durable.load();
    while (prev < seen && !durable.compare_exchange_weak(prev, seen)) {
    }
    return Status::Ok();
  });

  constexpr int kThreads = 8;
  std::atomic<int> uncovered{0};
  auto caller = [&] {
    const int mine = ++changes;
    ASSERT_TRUE(group.Sync().ok());
    if (durable.load() < mine) uncovered++;
  };
  std::thread first(caller);
  while (syncs.load() == 0) std::this_thread::yield();
  std::vector<std::thread> rest;
  for (int i = 1; i < kThreads; ++i) rest.emplace_back(caller);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // let them queue up
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  first.join();
  for (auto& t : rest) t.join();
  EXPECT_EQ(uncovered.load(), 0);
  EXPECT_LT(syncs.load(), kThreads);  // the queued callers shared their syncs
  EXPECT_GE(syncs.load(), 2);         // ...but not the one already running when they came
}

TEST(FsyncGroupTest, AFailedSyncFailsItsRoundOnly) {
  bool fail = true;
  FsyncGroup group([&] { return fail ? Status::IoError("fsync: disk gone") : Status::Ok(); });
  Status st = group.Sync();
  EXPECT_EQ(st.code(), Status::Code::kIoError);
  fail = false;
  EXPECT_TRUE(group.Sync().ok());
}

}  // namespace
}  // namespace xet
