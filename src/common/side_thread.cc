#include "common/side_thread.h"

#include <utility>

namespace xet {

SideThread::SideThread() : thread_([this] { Run(); }) {}

SideThread::~SideThread() {
  Wait();
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void SideThread::Start(std::function<void()> task) {
  {
    std::lock_guard lock(mu_);
    task_ = std::move(task);
  }
  cv_.notify_all();
}

void SideThread::Wait() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !task_; });
}

void SideThread::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || task_; });
    if (stop_) return;
    lock.unlock();
    task_();  // only this thread touches task_ until it is reset below
    lock.lock();
    task_ = nullptr;
    cv_.notify_all();
  }
}

}  // namespace xet
