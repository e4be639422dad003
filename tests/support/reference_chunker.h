// The spec's byte-at-a-time chunker (chunking.md pseudocode), written independently of
// src/format/chunker.cc so the optimized chunker can be checked against it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "format/gear_table.h"

namespace xet::testing {

inline std::vector<uint64_t> ReferenceChunkBoundaries(std::span<const uint8_t> data) {
  constexpr uint64_t kMin = 8192, kMax = 131072, kMask = 0xFFFF000000000000ULL;
  std::vector<uint64_t> ends;
  uint64_t h = 0, start = 0;
  for (uint64_t i = 0; i < data.size(); ++i) {
    h = (h << 1) + kGearTable[data[i]];
    const uint64_t size = i + 1 - start;
    if (size < kMin) continue;
    if (size >= kMax || (h & kMask) == 0) {
      ends.push_back(i + 1);
      start = i + 1;
      h = 0;
    }
  }
  if (start < data.size()) ends.push_back(data.size());
  return ends;
}

}  // namespace xet::testing
