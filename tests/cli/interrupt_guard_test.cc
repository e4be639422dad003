// InterruptGuard's contract inside one process (the Ctrl-C behaviour itself is driven
// through real `xetstore cp` processes in cp_cli_test.cc and cp_download_cli_test.cc).
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>

#include <chrono>

#include "cli/interrupt.h"

namespace xet::cli {
namespace {

bool Blocked(int sig) {
  sigset_t mask;
  sigemptyset(&mask);
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  return sigismember(&mask, sig) == 1;
}

TEST(InterruptGuard, BlocksItsSignalsWhileAliveAndRestoresTheMask) {
  ASSERT_FALSE(Blocked(SIGINT));
  ASSERT_FALSE(Blocked(SIGRTMIN));
  {
    InterruptGuard guard("hint");
    EXPECT_TRUE(Blocked(SIGINT));
    EXPECT_TRUE(Blocked(SIGTERM));
    EXPECT_TRUE(Blocked(SIGRTMIN));
  }
  EXPECT_FALSE(Blocked(SIGINT));
  EXPECT_FALSE(Blocked(SIGTERM));
  EXPECT_FALSE(Blocked(SIGRTMIN));
}

// The destructor wakes the watcher instead of waiting for a poll: 200 guards in a row used
// to cost up to 50 ms each (10 s); the bound leaves a wide margin for a loaded machine.
TEST(InterruptGuard, DestructionDoesNotWaitForAPollInterval) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 200; ++i) {
    InterruptGuard guard("hint");
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

}  // namespace
}  // namespace xet::cli
