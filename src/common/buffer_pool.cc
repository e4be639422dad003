#include "common/buffer_pool.h"

#include <utility>

#include "common/huge_pages.h"

namespace xet {

std::vector<uint8_t> BufferPool::Take(size_t capacity) {
  std::vector<uint8_t> buffer;
  {
    std::lock_guard lock(mu_);
    if (!free_.empty()) {
      buffer = std::move(free_.back());
      free_.pop_back();
    }
  }
  if (buffer.capacity() < capacity) {
    buffer.reserve(capacity);
    AdviseHugePages(buffer.data(), buffer.capacity());
  }
  return buffer;
}

void BufferPool::Give(std::vector<uint8_t> buffer) {
  if (buffer.capacity() == 0) return;
  buffer.clear();
  std::lock_guard lock(mu_);
  if (free_.size() < max_buffers_) free_.push_back(std::move(buffer));
}

size_t BufferPool::pooled() const {
  std::lock_guard lock(mu_);
  return free_.size();
}

}  // namespace xet
