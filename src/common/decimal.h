// Decimal formatting for the hot writers of large answers (reconstruction JSON, signed
// URLs), which print several numbers per term of a 100,000-term file: values below 2^32
// (chunk indices, offsets within a xorb) use 32-bit arithmetic, two digits per step,
// into a length known up front; larger ones go through std::to_chars.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstring>

namespace xet {

namespace decimal_internal {
inline constexpr char kDigitPairs[201] =
    "0001020304050607080910111213141516171819"
    "2021222324252627282930313233343536373839"
    "4041424344454647484950515253545556575859"
    "6061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";
}  // namespace decimal_internal

// Writes `v` in decimal at `p` (at most 20 characters, no terminator); returns the end.
inline char* WriteDecimal(char* p, uint64_t v) {
  if (v >> 32) return std::to_chars(p, p + 20, v).ptr;
  auto x = static_cast<uint32_t>(v);
  const int n = x < 10           ? 1
                : x < 100        ? 2
                : x < 1000       ? 3
                : x < 10000      ? 4
                : x < 100000     ? 5
                : x < 1000000    ? 6
                : x < 10000000   ? 7
                : x < 100000000  ? 8
                : x < 1000000000 ? 9
                                 : 10;
  char* const end = p + n;
  char* q = end;
  while (x >= 100) {
    const uint32_t r = x % 100;
    x /= 100;
    q -= 2;
    std::memcpy(q, &decimal_internal::kDigitPairs[2 * r], 2);
  }
  if (x >= 10) {
    std::memcpy(q - 2, &decimal_internal::kDigitPairs[2 * x], 2);
  } else {
    q[-1] = static_cast<char>('0' + x);
  }
  return end;
}

}  // namespace xet
