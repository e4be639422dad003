// Unit tests for SideThread: a started task runs on another thread and Wait() returns only
// after it finished; the thread runs any number of tasks in turn; the destructor waits
// for a task still running.
#include "common/side_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace xet {
namespace {

TEST(SideThread, RunsTasksInTurnOnAnotherThread) {
  SideThread side;
  for (int i = 0; i < 100; ++i) {
    std::thread::id ran_on;
    int value = 0;
    side.Start([&] {
      ran_on = std::this_thread::get_id();
      value = i + 1;
    });
    side.Wait();
    EXPECT_NE(ran_on, std::this_thread::get_id());
    EXPECT_EQ(value, i + 1);
  }
  side.Wait();  // idle: returns at once
}

TEST(SideThread, WaitAndDestructorWaitForASlowTask) {
  std::atomic<bool> done{false};
  {
    SideThread side;
    side.Start([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      done = true;
    });
  }
  EXPECT_TRUE(done.load());
  SideThread side;
  done = false;
  side.Start([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    done = true;
  });
  side.Wait();
  EXPECT_TRUE(done.load());
}

}  // namespace
}  // namespace xet
