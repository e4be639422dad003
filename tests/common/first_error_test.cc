// Unit tests for FirstError: the first non-OK status wins, OK statuses are ignored, and
// failed() is seen by every thread once a failure is set.
#include "common/first_error.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace xet {
namespace {

TEST(FirstError, StartsOkAndNotFailed) {
  FirstError e;
  EXPECT_FALSE(e.failed());
  EXPECT_TRUE(e.status().ok());
}

TEST(FirstError, KeepsTheFirstFailureOnly) {
  FirstError e;
  EXPECT_TRUE(e.Set(Status::Corruption("first")));
  EXPECT_TRUE(e.failed());
  EXPECT_FALSE(e.Set(Status::Cancelled("second")));
  EXPECT_EQ(e.status().code(), Status::Code::kCorruption);
  EXPECT_EQ(e.status().message(), "first");
}

TEST(FirstError, IgnoresOkStatuses) {
  FirstError e;
  EXPECT_FALSE(e.Set(Status::Ok()));
  EXPECT_FALSE(e.failed());
  EXPECT_TRUE(e.Set(Status::IoError("disk")));
  EXPECT_FALSE(e.Set(Status::Ok()));
  EXPECT_EQ(e.status().message(), "disk");
}

TEST(FirstError, ExactlyOneOfManyRacingThreadsWins) {
  FirstError e;
  std::atomic<int> winners{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      if (e.Set(Status::Internal("worker " + std::to_string(i)))) ++winners;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(winners.load(), 1);
  EXPECT_TRUE(e.failed());
  const std::string kept = e.status().message();
  EXPECT_EQ(kept.rfind("worker ", 0), 0u) << kept;
}

TEST(FirstError, WorkersPollingFailedStop) {
  FirstError e;
  std::atomic<int> stopped{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      while (!e.failed()) std::this_thread::yield();
      ++stopped;
    });
  }
  e.Set(Status::Cancelled("stop"));
  for (auto& t : threads) t.join();
  EXPECT_EQ(stopped.load(), 4);
}

}  // namespace
}  // namespace xet
