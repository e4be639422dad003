// BoundedQueue: a blocking multi-producer multi-consumer FIFO with a capacity, used to
// connect pipeline stages with bounded memory.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>

#include "common/mutex.h"

namespace xet {

template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(size_t capacity) : capacity_(capacity) {}

  // Blocks while full. Returns false (dropping `item`) once the queue is closed.
  bool Push(T item) {
    MutexLock lock(mu_);
    while (!closed_ && items_.size() >= capacity_) not_full_.Wait(mu_);
    if (closed_) return false;
    items_.push_back(std::move(item));
    not_empty_.NotifyOne();
    return true;
  }

  // Blocks while empty and open. Returns nullopt once closed and drained.
  std::optional<T> Pop() {
    MutexLock lock(mu_);
    while (!closed_ && items_.empty()) not_empty_.Wait(mu_);
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    not_full_.NotifyOne();
    return item;
  }

  // After Close, Push fails and Pop drains what is left, then returns nullopt.
  void Close() {
    MutexLock lock(mu_);
    closed_ = true;
    not_empty_.NotifyAll();
    not_full_.NotifyAll();
  }

 private:
  const size_t capacity_;
  Mutex mu_;
  CondVar not_full_, not_empty_;
  std::deque<T> items_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
};

}  // namespace xet
