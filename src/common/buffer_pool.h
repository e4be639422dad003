// BufferPool: large byte buffers handed back and forth between threads, so that each one is
// faulted in once instead of once per use.
//
// A freshly allocated buffer of tens of MiB is a new anonymous mapping: every page of it
// costs a fault (and zeroing) on first touch, which in this project's VMs costs more than
// the copy that fills it. A pool keeps the buffers a pipeline returns (e.g. the bytes of a
// xorb once it is uploaded) and gives them to the next producer with their capacity intact.
// Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace xet {

class BufferPool {
 public:
  // Keeps at most `max_buffers` returned buffers; a buffer returned beyond that is freed.
  explicit BufferPool(size_t max_buffers) : max_buffers_(max_buffers) {}

  // An empty vector with at least `capacity` bytes of capacity: a returned buffer when
  // one is pooled, else a new allocation advised for transparent huge pages
  // (common/huge_pages.h), so even its first touch costs few faults.
  std::vector<uint8_t> Take(size_t capacity);

  // Returns `buffer` to the pool (its contents are discarded). Buffers without capacity are
  // ignored.
  void Give(std::vector<uint8_t> buffer);

  size_t pooled() const;

 private:
  const size_t max_buffers_;
  mutable std::mutex mu_;
  std::vector<std::vector<uint8_t>> free_;
};

}  // namespace xet
