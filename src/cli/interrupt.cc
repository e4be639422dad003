#include "cli/interrupt.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <ctime>
#include <utility>

#include "cli/output.h"
#include "cli/remote_failure.h"

namespace xet::cli {
namespace {

sigset_t InterruptSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

InterruptGuard::InterruptGuard(std::string hint) : hint_(std::move(hint)) {
  const sigset_t set = InterruptSignals();
  if (pthread_sigmask(SIG_BLOCK, &set, &old_mask_) != 0) return;  // no guard: default handling
  restore_mask_ = true;
  watcher_ = std::thread([this, set] {
    const timespec tick{0, 50'000'000};  // re-check stop_ every 50 ms
    while (!stop_.load()) {
      const int sig = sigtimedwait(&set, nullptr, &tick);
      if (sig == SIGINT || sig == SIGTERM) {
        if (::isatty(STDERR_FILENO)) {
          (void)!::write(STDERR_FILENO, "\n", 1);  // leave the progress line
        }
        PrintError("interrupted", hint_);
        ::_exit(kExitInterrupted);
      }
    }
  });
}

InterruptGuard::~InterruptGuard() {
  stop_.store(true);
  if (watcher_.joinable()) watcher_.join();
  if (restore_mask_) pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

}  // namespace xet::cli
