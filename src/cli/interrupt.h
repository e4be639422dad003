// Ctrl-C during a client command: the process stops at once with a one-line error and exit
// code 130, and never leaves a half-written destination behind, because every command writes
// only in ways an abrupt stop cannot tear (uploads register files in one batch after their
// data landed; downloads write "<dest>.xetpart" and rename it when complete).
#pragma once

#include <signal.h>

#include <atomic>
#include <string>
#include <thread>

namespace xet::cli {

class InterruptGuard {
 public:
  // Blocks SIGINT, SIGTERM and SIGRTMIN (the watcher's wake-up) in the calling thread, and so
  // in every thread created after this (construct it before the command starts any thread),
  // and starts a thread that waits for them. On SIGINT or SIGTERM, it prints "xetstore:
  // error: interrupted" with `hint` to stderr and ends the process with kExitInterrupted
  // without running destructors. A signal the process ignores (e.g. SIGINT of a background
  // job of a script) stays ignored.
  explicit InterruptGuard(std::string hint);
  // Wakes and joins the waiting thread (at once: no polling interval), then restores the
  // signal mask.
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  std::string hint_;
  std::atomic<bool> stop_{false};
  bool restore_mask_ = false;
  sigset_t old_mask_{};
  std::thread watcher_;
};

}  // namespace xet::cli
