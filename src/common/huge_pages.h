// Large buffers and transparent huge pages.
//
// Touching a fresh 4 KiB page costs a page fault, which is expensive in a virtualized
// guest: first-touching a buffer of tens of MiB can cost more than the work done on it.
// Buffers of many megabytes (request bodies, large answers, I/O bounce buffers) therefore
// ask for 2 MiB transparent huge pages, which need 512 times fewer faults. Both helpers are
// best effort: where huge pages are off or unavailable, the memory works as usual.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace xet {

// Asks the kernel to back the 2 MiB-aligned pages inside [data, data + size) with
// transparent huge pages when they are first touched (madvise MADV_HUGEPAGE). For memory
// from malloc (e.g. a std::string's reserved capacity) before it is written. Does nothing
// when the range holds no whole 2 MiB page.
void AdviseHugePages(void* data, size_t size);

// A zero-filled buffer in its own anonymous mapping, aligned to 2 MiB (so suitable for
// O_DIRECT I/O at any block size) and advised for huge pages. Move-only.
class PageAlignedBuffer {
 public:
  PageAlignedBuffer() = default;
  // An empty buffer (data() == nullptr) if the mapping fails.
  explicit PageAlignedBuffer(size_t size);
  ~PageAlignedBuffer();
  PageAlignedBuffer(PageAlignedBuffer&& other) noexcept;
  PageAlignedBuffer& operator=(PageAlignedBuffer&& other) noexcept;
  PageAlignedBuffer(const PageAlignedBuffer&) = delete;
  PageAlignedBuffer& operator=(const PageAlignedBuffer&) = delete;

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<uint8_t> span() const { return {data_, size_}; }

 private:
  void Release();

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void* mapping_ = nullptr;  // what munmap needs: the mapping includes the alignment slack
  size_t mapping_size_ = 0;
};

}  // namespace xet
