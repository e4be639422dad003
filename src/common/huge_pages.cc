#include "common/huge_pages.h"

#include <sys/mman.h>

#include <utility>

namespace xet {
namespace {

constexpr uintptr_t kHugePage = uintptr_t{2} << 20;

}  // namespace

void AdviseHugePages(void* data, size_t size) {
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t last = (begin + size) & ~(kHugePage - 1);
  if (data == nullptr || last <= first) return;
  // Best effort: EINVAL where THP is compiled out, and the memory simply stays as it is.
  (void)::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

PageAlignedBuffer::PageAlignedBuffer(size_t size) {
  if (size == 0) return;
  const size_t rounded = (size + kHugePage - 1) & ~(kHugePage - 1);
  const size_t mapping_size = rounded + kHugePage;  // slack to align the start
  void* mapping =
      ::mmap(nullptr, mapping_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED) return;
  mapping_ = mapping;
  mapping_size_ = mapping_size;
  const auto begin = reinterpret_cast<uintptr_t>(mapping);
  data_ = reinterpret_cast<uint8_t*>((begin + kHugePage - 1) & ~(kHugePage - 1));
  size_ = size;
  AdviseHugePages(data_, rounded);
}

PageAlignedBuffer::~PageAlignedBuffer() { Release(); }

PageAlignedBuffer::PageAlignedBuffer(PageAlignedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapping_(std::exchange(other.mapping_, nullptr)),
      mapping_size_(std::exchange(other.mapping_size_, 0)) {}

PageAlignedBuffer& PageAlignedBuffer::operator=(PageAlignedBuffer&& other) noexcept {
  if (this != &other) {
    Release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapping_size_ = std::exchange(other.mapping_size_, 0);
  }
  return *this;
}

void PageAlignedBuffer::Release() {
  if (mapping_ != nullptr) ::munmap(mapping_, mapping_size_);
  mapping_ = nullptr;
  mapping_size_ = 0;
  data_ = nullptr;
  size_ = 0;
}

}  // namespace xet
