// Peak heap use of one fuzz input, for the "no unbounded allocation" property: a parser
// given N bytes may allocate O(N) (its DOM, its result) but not more.
//
// heap_meter.cc replaces the global operator new/delete of the fuzzer binary (each fuzzer
// links it) and counts the usable size of every live block; HeapScope reads the peak
// reached while it lives. Blocks from malloc() called directly are not counted.
// Single-threaded use (libFuzzer runs one input at a time).
#pragma once

#include <cstddef>
#include <cstdio>
#include <cstdlib>

namespace xet::fuzz {

// Bytes allocated with operator new and not yet freed.
size_t HeapLiveBytes();
// Sets the high-water mark to the current live bytes.
void ResetHeapPeak();
// The high-water mark of HeapLiveBytes since the last ResetHeapPeak.
size_t HeapPeakBytes();

// Measures the peak heap growth between its construction and Check().
class HeapScope {
 public:
  HeapScope() : base_(HeapLiveBytes()) { ResetHeapPeak(); }
  size_t PeakGrowth() const {
    const size_t peak = HeapPeakBytes();
    return peak > base_ ? peak - base_ : 0;
  }
  // Aborts (so the fuzzer reports the input) when the growth exceeded
  // per_input_byte * input_size + fixed bytes.
  void Check(const char* what, size_t input_size, size_t per_input_byte, size_t fixed) const {
    const size_t grew = PeakGrowth();
    if (grew > per_input_byte * input_size + fixed) {
      std::fprintf(stderr, "%s: %zu bytes of input made the heap grow by %zu bytes\n", what,
                   input_size, grew);
      std::abort();
    }
  }

 private:
  size_t base_;
};

}  // namespace xet::fuzz
