#include "common/side_thread.h"

#include <utility>

namespace xet {

SideThread::SideThread() : thread_([this] { Run(); }) {}

SideThread::~SideThread() {
  Wait();
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  thread_.join();
}

void SideThread::Start(std::function<void()> task) {
  {
    MutexLock lock(mu_);
    task_ = std::move(task);
  }
  cv_.NotifyAll();
}

void SideThread::Wait() {
  MutexLock lock(mu_);
  while (task_) cv_.Wait(mu_);
}

void SideThread::Run() {
  MutexLock lock(mu_);
  while (true) {
    while (!stop_ && !task_) cv_.Wait(mu_);
    if (stop_) return;
    {
      MutexUnlock unlocked(mu_);
      CallTaskUnlocked();
    }
    task_ = nullptr;
    cv_.NotifyAll();
  }
}

}  // namespace xet
