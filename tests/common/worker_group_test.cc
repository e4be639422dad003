// Unit tests for WorkerGroup: every thread runs the work once, on threads of its own;
// Join() waits for all of them and is idempotent; the destructor joins.
#include "common/worker_group.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

namespace xet {
namespace {

TEST(WorkerGroup, RunsTheWorkOncePerThread) {
  std::atomic<int> runs{0};
  std::mutex mu;  // protects ids
  std::set<std::thread::id> ids;
  WorkerGroup group(5, [&] {
    ++runs;
    std::lock_guard lock(mu);
    ids.insert(std::this_thread::get_id());
  });
  EXPECT_EQ(group.size(), 5u);
  group.Join();
  EXPECT_EQ(group.size(), 0u);
  EXPECT_EQ(runs.load(), 5);
  EXPECT_EQ(ids.size(), 5u);
  EXPECT_EQ(ids.count(std::this_thread::get_id()), 0u);
  group.Join();  // again: nothing to wait for
}

TEST(WorkerGroup, DestructorWaitsForRunningWork) {
  std::atomic<int> finished{0};
  {
    WorkerGroup group(3, [&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      ++finished;
    });
  }
  EXPECT_EQ(finished.load(), 3);
}

TEST(WorkerGroup, EmptyGroupHasNoThreads) {
  WorkerGroup none;
  EXPECT_EQ(none.size(), 0u);
  WorkerGroup zero(0, [] { FAIL() << "no thread should run"; });
  EXPECT_EQ(zero.size(), 0u);
}

}  // namespace
}  // namespace xet
