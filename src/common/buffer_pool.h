// BufferPool: large byte buffers handed back and forth between threads, so that each one is
// faulted in once instead of once per use.
//
// A freshly allocated buffer of tens of MiB is a new anonymous mapping: every page of it
// costs a fault (and zeroing) on first touch, which in this project's VMs costs more than
// the copy that fills it. A pool keeps the buffers a pipeline returns (e.g. the bytes of a
// xorb once it is uploaded, a request body once it is handled) and gives them to the next
// producer with their capacity intact. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/huge_pages.h"
#include "common/mutex.h"

namespace xet {

// `Buffer` is a contiguous byte container: std::vector<uint8_t> or std::string.
template <typename Buffer>
class BasicBufferPool {
 public:
  // Keeps at most `max_buffers` returned buffers; a buffer returned beyond that is freed.
  explicit BasicBufferPool(size_t max_buffers) : max_buffers_(max_buffers) {}

  // An empty buffer with at least `capacity` bytes of capacity: a returned one when one is
  // pooled, else a new allocation advised for transparent huge pages
  // (common/huge_pages.h), so even its first touch costs few faults.
  Buffer Take(size_t capacity) {
    Buffer buffer;
    {
      MutexLock lock(mu_);
      if (!free_.empty()) {
        buffer = std::move(free_.back());
        free_.pop_back();
        pooled_bytes_ -= buffer.capacity();
      }
    }
    if (buffer.capacity() < capacity) {
      buffer.reserve(capacity);
      AdviseHugePages(buffer.data(), buffer.capacity());
    }
    return buffer;
  }

  // A pooled buffer (empty, with whatever capacity it had) if there is one, else an empty
  // default-constructed buffer: never allocates.
  Buffer TakePooled() {
    MutexLock lock(mu_);
    if (free_.empty()) return Buffer();
    Buffer buffer = std::move(free_.back());
    free_.pop_back();
    pooled_bytes_ -= buffer.capacity();
    return buffer;
  }

  // Returns `buffer` to the pool (its contents are discarded). Buffers without capacity are
  // ignored.
  void Give(Buffer buffer) {
    if (buffer.capacity() == 0) return;
    buffer.clear();
    MutexLock lock(mu_);
    if (free_.size() < max_buffers_) {
      pooled_bytes_ += buffer.capacity();
      free_.push_back(std::move(buffer));
    }
  }

  // Frees every pooled buffer.
  void Clear() {
    std::vector<Buffer> freed;
    {
      MutexLock lock(mu_);
      freed.swap(free_);
      pooled_bytes_ = 0;
    }
  }

  size_t pooled() const {
    MutexLock lock(mu_);
    return free_.size();
  }
  // The capacity of the pooled buffers, in bytes.
  size_t pooled_bytes() const {
    MutexLock lock(mu_);
    return pooled_bytes_;
  }

 private:
  const size_t max_buffers_;
  mutable Mutex mu_;
  std::vector<Buffer> free_ GUARDED_BY(mu_);
  size_t pooled_bytes_ GUARDED_BY(mu_) = 0;
};

using BufferPool = BasicBufferPool<std::vector<uint8_t>>;
using StringBufferPool = BasicBufferPool<std::string>;

}  // namespace xet
