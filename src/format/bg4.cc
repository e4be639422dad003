#include "format/bg4.h"

#include <cassert>
#include <cstddef>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace xet {
namespace {

// Start offsets of the 4 groups in the grouped layout of n bytes.
struct GroupOffsets {
  size_t words;  // n / 4: bytes every group has
  size_t rem;    // n % 4: groups [0, rem) have one byte more
  size_t off[4];
};

GroupOffsets OffsetsFor(size_t n) {
  GroupOffsets g{};
  g.words = n / 4;
  g.rem = n % 4;
  size_t pos = 0;
  for (size_t k = 0; k < 4; ++k) {
    g.off[k] = pos;
    pos += g.words + (k < g.rem ? 1 : 0);
  }
  return g;
}

#if defined(__SSE2__)
// Groups 16 words (64 bytes) starting at word `i`.
inline void GroupBlock16(const uint8_t* in, uint8_t* g0, uint8_t* g1, uint8_t* g2, uint8_t* g3) {
  const __m128i* src = reinterpret_cast<const __m128i*>(in);
  const __m128i v0 = _mm_loadu_si128(src + 0);
  const __m128i v1 = _mm_loadu_si128(src + 1);
  const __m128i v2 = _mm_loadu_si128(src + 2);
  const __m128i v3 = _mm_loadu_si128(src + 3);
  const __m128i low = _mm_set1_epi32(0xFF);
  // Each 32-bit lane holds one byte value 0..255 after the shift and mask, so the
  // saturating packs are exact: 4x(4 x u32) -> 2x(8 x u16) -> 16 x u8, in word order.
  auto pack = [](__m128i a, __m128i b, __m128i c, __m128i d) {
    return _mm_packus_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d));
  };
  _mm_storeu_si128(reinterpret_cast<__m128i*>(g0),
                   pack(_mm_and_si128(v0, low), _mm_and_si128(v1, low), _mm_and_si128(v2, low),
                        _mm_and_si128(v3, low)));
  _mm_storeu_si128(
      reinterpret_cast<__m128i*>(g1),
      pack(_mm_and_si128(_mm_srli_epi32(v0, 8), low), _mm_and_si128(_mm_srli_epi32(v1, 8), low),
           _mm_and_si128(_mm_srli_epi32(v2, 8), low), _mm_and_si128(_mm_srli_epi32(v3, 8), low)));
  _mm_storeu_si128(
      reinterpret_cast<__m128i*>(g2),
      pack(_mm_and_si128(_mm_srli_epi32(v0, 16), low), _mm_and_si128(_mm_srli_epi32(v1, 16), low),
           _mm_and_si128(_mm_srli_epi32(v2, 16), low), _mm_and_si128(_mm_srli_epi32(v3, 16), low)));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(g3),
                   pack(_mm_srli_epi32(v0, 24), _mm_srli_epi32(v1, 24), _mm_srli_epi32(v2, 24),
                        _mm_srli_epi32(v3, 24)));
}

// Inverse of GroupBlock16: interleaves 16 bytes of each group into 64 output bytes.
inline void UngroupBlock16(const uint8_t* g0, const uint8_t* g1, const uint8_t* g2,
                           const uint8_t* g3, uint8_t* out) {
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(g0));
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(g1));
  const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(g2));
  const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(g3));
  const __m128i ab_lo = _mm_unpacklo_epi8(a, b);  // bytes 0,1 of words 0..7
  const __m128i ab_hi = _mm_unpackhi_epi8(a, b);  // bytes 0,1 of words 8..15
  const __m128i cd_lo = _mm_unpacklo_epi8(c, d);  // bytes 2,3 of words 0..7
  const __m128i cd_hi = _mm_unpackhi_epi8(c, d);  // bytes 2,3 of words 8..15
  __m128i* dst = reinterpret_cast<__m128i*>(out);
  _mm_storeu_si128(dst + 0, _mm_unpacklo_epi16(ab_lo, cd_lo));
  _mm_storeu_si128(dst + 1, _mm_unpackhi_epi16(ab_lo, cd_lo));
  _mm_storeu_si128(dst + 2, _mm_unpacklo_epi16(ab_hi, cd_hi));
  _mm_storeu_si128(dst + 3, _mm_unpackhi_epi16(ab_hi, cd_hi));
}
#endif

}  // namespace

void Bg4Group(std::span<const uint8_t> in, std::span<uint8_t> out) {
  assert(in.size() == out.size());
  const GroupOffsets g = OffsetsFor(in.size());
  const uint8_t* src = in.data();
  uint8_t* g0 = out.data() + g.off[0];
  uint8_t* g1 = out.data() + g.off[1];
  uint8_t* g2 = out.data() + g.off[2];
  uint8_t* g3 = out.data() + g.off[3];
  size_t i = 0;
#if defined(__SSE2__)
  for (; i + 16 <= g.words; i += 16) {
    GroupBlock16(src + 4 * i, g0 + i, g1 + i, g2 + i, g3 + i);
  }
#endif
  for (; i < g.words; ++i) {
    g0[i] = src[4 * i];
    g1[i] = src[4 * i + 1];
    g2[i] = src[4 * i + 2];
    g3[i] = src[4 * i + 3];
  }
  // The remainder bytes sit at positions 4*words + k, k < rem: one to each first group.
  uint8_t* groups[3] = {g0, g1, g2};
  for (size_t k = 0; k < g.rem; ++k) groups[k][g.words] = src[4 * g.words + k];
}

void Bg4Ungroup(std::span<const uint8_t> in, std::span<uint8_t> out) {
  assert(in.size() == out.size());
  const GroupOffsets g = OffsetsFor(in.size());
  const uint8_t* g0 = in.data() + g.off[0];
  const uint8_t* g1 = in.data() + g.off[1];
  const uint8_t* g2 = in.data() + g.off[2];
  const uint8_t* g3 = in.data() + g.off[3];
  uint8_t* dst = out.data();
  size_t i = 0;
#if defined(__SSE2__)
  for (; i + 16 <= g.words; i += 16) {
    UngroupBlock16(g0 + i, g1 + i, g2 + i, g3 + i, dst + 4 * i);
  }
#endif
  for (; i < g.words; ++i) {
    dst[4 * i] = g0[i];
    dst[4 * i + 1] = g1[i];
    dst[4 * i + 2] = g2[i];
    dst[4 * i + 3] = g3[i];
  }
  const uint8_t* groups[3] = {g0, g1, g2};
  for (size_t k = 0; k < g.rem; ++k) dst[4 * g.words + k] = groups[k][g.words];
}

}  // namespace xet
