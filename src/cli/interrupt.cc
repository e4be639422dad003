#include "cli/interrupt.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <utility>

#include "cli/output.h"
#include "cli/remote_failure.h"

namespace xet::cli {
namespace {

// Sent by the destructor to the watcher thread alone, so that it returns at once instead of
// at its next poll, which every command's exit would otherwise wait for.
int WakeSignal() { return SIGRTMIN; }

sigset_t WatchedSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, WakeSignal());
  return set;
}

}  // namespace

InterruptGuard::InterruptGuard(std::string hint) : hint_(std::move(hint)) {
  // The wake signal is blocked too, so one sent before the watcher waits stays pending.
  const sigset_t set = WatchedSignals();
  if (pthread_sigmask(SIG_BLOCK, &set, &old_mask_) != 0) return;  // no guard: default handling
  restore_mask_ = true;
  watcher_ = std::thread([this, set] {
    while (!stop_.load()) {
      const int sig = sigwaitinfo(&set, nullptr);
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
  if (watcher_.joinable()) {
    pthread_kill(watcher_.native_handle(), WakeSignal());
    watcher_.join();
  }
  if (restore_mask_) pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

}  // namespace xet::cli
