#include "fuzz/support/heap_meter.h"

#include <malloc.h>

#include <cstdlib>
#include <new>

namespace xet::fuzz {
namespace {

// Plain globals: the replacement operators below run before and after any object with a
// constructor could, and fuzzers run one input at a time.
size_t g_live = 0;
size_t g_peak = 0;

void* Allocate(size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  g_live += malloc_usable_size(p);
  if (g_live > g_peak) g_peak = g_live;
  return p;
}

void Release(void* p) {
  if (p == nullptr) return;
  g_live -= malloc_usable_size(p);
  std::free(p);
}

}  // namespace

size_t HeapLiveBytes() { return g_live; }
void ResetHeapPeak() { g_peak = g_live; }
size_t HeapPeakBytes() { return g_peak; }

}  // namespace xet::fuzz

// Replacements of the global allocation functions (the aligned forms stay the library's:
// nothing these fuzzers run over-aligns).
void* operator new(size_t n) { return xet::fuzz::Allocate(n); }
void* operator new[](size_t n) { return xet::fuzz::Allocate(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  try {
    return xet::fuzz::Allocate(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  try {
    return xet::fuzz::Allocate(n);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { xet::fuzz::Release(p); }
void operator delete[](void* p) noexcept { xet::fuzz::Release(p); }
void operator delete(void* p, size_t) noexcept { xet::fuzz::Release(p); }
void operator delete[](void* p, size_t) noexcept { xet::fuzz::Release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { xet::fuzz::Release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { xet::fuzz::Release(p); }
