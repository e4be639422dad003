// SideThread: one background thread that runs one task at a time for a single owner, so
// that the owner can split a piece of work in two and do its half meanwhile.
//
// Usage: Start(task) hands `task` to the thread and returns at once; Wait() returns once
// it has run. Requires: Start only when idle (no Start since the last Wait). Not
// thread-safe: one caller drives it. The thread lives as long as the object (RAII); the
// destructor waits for a started task.
#pragma once

#include <functional>
#include <thread>

#include "common/mutex.h"

namespace xet {

class SideThread {
 public:
  SideThread();
  ~SideThread();
  SideThread(const SideThread&) = delete;
  SideThread& operator=(const SideThread&) = delete;

  void Start(std::function<void()> task);
  void Wait();

 private:
  void Run();
  // Calls task_ with mu_ released, which is safe: until Run resets task_, no other thread
  // touches it (Start requires idle).
  void CallTaskUnlocked() NO_THREAD_SAFETY_ANALYSIS { task_(); }

  Mutex mu_;
  CondVar cv_;
  std::function<void()> task_ GUARDED_BY(mu_);  // set while a task is pending or running
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace xet
