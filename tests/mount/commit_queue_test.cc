#include "mount/commit_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "common/mutex.h"

namespace xet {
namespace {

TEST(CommitQueue, GroupsWhatQueuedWhileACommitRan) {
  Mutex mu;
  std::vector<std::vector<Ino>> groups;
  std::atomic<bool> release{false};
  CommitQueue q([&](const std::vector<Ino>& inos) {
    {
      MutexLock lock(mu);
      groups.push_back(inos);
    }
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return std::vector<Ino>{};
  });
  q.Enqueue(1);
  while (true) {  // wait until the first group runs
    MutexLock lock(mu);
    if (!groups.empty()) break;
  }
  q.Enqueue(3);
  q.Enqueue(2);
  q.Enqueue(3);
  release = true;
  EXPECT_TRUE(q.Drain());
  MutexLock lock(mu);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0], (std::vector<Ino>{1}));
  EXPECT_EQ(groups[1], (std::vector<Ino>{2, 3}));
}

TEST(CommitQueue, FailuresAreReportedByDrainAndRetried) {
  std::atomic<int> calls{0};
  // A long gather time: the first attempt starts only when Drain asks for it (with none, it
  // could start and fail before Drain is called; that Drain would then rightly run the
  // retry at once and succeed).
  CommitQueue q(
      [&](const std::vector<Ino>& inos) {
        return ++calls == 1 ? inos : std::vector<Ino>{};  // the first attempt fails
      },
      /*gather_ms=*/60'000);
  q.Enqueue(7);
  EXPECT_FALSE(q.Drain());
  EXPECT_EQ(calls.load(), 1);
  EXPECT_TRUE(q.Drain());  // runs the retry now instead of after its delay
  EXPECT_EQ(calls.load(), 2);
}

TEST(CommitQueue, DestructionCommitsWhatIsQueued) {
  std::atomic<int> committed{0};
  {
    CommitQueue q([&](const std::vector<Ino>& inos) {
      committed += static_cast<int>(inos.size());
      return std::vector<Ino>{};
    });
    for (Ino i = 1; i <= 5; ++i) q.Enqueue(i);
  }
  EXPECT_EQ(committed.load(), 5);
}

}  // namespace
}  // namespace xet
