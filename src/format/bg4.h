// BG4 byte grouping (Xet spec, xorb.md, "Byte Grouping LZ4 Compression"): the transform
// applied before LZ4 by compression scheme 2.
//
// Grouping splits the input into 4 groups by byte position mod 4 and concatenates them:
// group g holds bytes g, g+4, g+8, ... in order. For n bytes, group g has n/4 bytes plus one
// more when g < n % 4, so the 1-3 remainder bytes go one each to the first groups, exactly as
// the spec says. Bg4Ungroup is the exact inverse.
//
// Both are pure, allocation-free and fast (SSE2 on x86-64, which every x86-64 CPU has; a
// portable scalar loop elsewhere).
#pragma once

#include <cstdint>
#include <span>

namespace xet {

// Writes the byte-grouped form of `in` to `out`.
// Requires out.size() == in.size() and that the two spans do not overlap.
void Bg4Group(std::span<const uint8_t> in, std::span<uint8_t> out);

// Inverse of Bg4Group: writes the original bytes of the grouped `in` to `out`, so that
// Bg4Ungroup(Bg4Group(x)) == x for every x.
// Requires out.size() == in.size() and that the two spans do not overlap.
void Bg4Ungroup(std::span<const uint8_t> in, std::span<uint8_t> out);

}  // namespace xet
