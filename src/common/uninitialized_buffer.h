// UninitializedBytes: a byte vector whose resize() leaves new bytes uninitialized.
//
// std::vector<uint8_t>::resize value-initializes (zeroes) every new byte. For a buffer that
// is about to be overwritten whole (decoded data, received bytes) that is a wasted pass
// over memory: for a reused buffer it costs as much as filling it, and it showed up in
// profiles of streamed downloads. Use this type only where every byte is
// written before it is read.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace xet {

// An allocator that default-initializes (for bytes: leaves alone) instead of
// value-initializing when constructing without arguments.
template <typename T>
class DefaultInitAllocator : public std::allocator<T> {
 public:
  using std::allocator<T>::allocator;
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };

  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    std::allocator_traits<std::allocator<T>>::construct(static_cast<std::allocator<T>&>(*this), p,
                                                        std::forward<Args>(args)...);
  }
};

using UninitializedBytes = std::vector<uint8_t, DefaultInitAllocator<uint8_t>>;

}  // namespace xet
