#include "format/chunker.h"

#include <algorithm>

#include "format/gear_table.h"

namespace xet {
namespace {

inline uint64_t Roll(uint64_t h, uint8_t b) { return (h << 1) + kGearTable[b]; }
inline bool IsHit(uint64_t h) { return (h & kChunkBoundaryMask) == 0; }

// The hash state after the kGearWindow bytes that end just before `end`: equal to the
// state of any longer run over the same final 64 bytes.
inline uint64_t WarmUp(const uint8_t* end) {
  uint64_t h = 0;
  for (const uint8_t* p = end - kGearWindow; p < end; ++p) h = Roll(h, *p);
  return h;
}

size_t FindHitScalar(const uint8_t* d, size_t begin, size_t end, uint64_t* hash) {
  uint64_t h = *hash;
  size_t p = begin;
  // Eight bytes per round, without a dependent step per byte: within a round,
  // u_k = sum_{i<=k} T[d[p+i]] << (k-i) depends on the bytes only, and the hash after byte
  // p+k is (h << (k+1)) + u_k, so the chain from round to round is one shift and one add
  // ((h << 8) + u_7) instead of eight dependent updates.
  for (; p + 8 <= end; p += 8) {
    uint64_t u = 0;
#pragma GCC unroll 8
    for (size_t k = 0; k < 8; ++k) {
      u = (u << 1) + kGearTable[d[p + k]];
      const uint64_t hk = (h << (k + 1)) + u;
      if (IsHit(hk)) [[unlikely]] {
        *hash = hk;
        return p + k;
      }
    }
    h = (h << 8) + u;
  }
  for (; p < end; ++p) {
    h = Roll(h, d[p]);
    if (IsHit(h)) [[unlikely]] {
      *hash = h;
      return p;
    }
  }
  *hash = h;
  return end;
}

}  // namespace

namespace internal {
size_t FindGearHit(const uint8_t* data, size_t begin, size_t end, uint64_t* hash) {
  return FindHitScalar(data, begin, end, hash);
}
}  // namespace internal

size_t Chunker::NextBoundary(std::span<const uint8_t> data) {
  const uint8_t* d = data.data();
  const size_t n = data.size();
  const size_t prev = static_cast<size_t>(pending_);
  // A cut may follow data[p] only when the chunk would then hold >= kMinChunkSize bytes;
  // it must follow data[limit - 1] at the latest.
  const size_t first_test = prev + 1 < kMinChunkSize ? kMinChunkSize - prev - 1 : 0;
  const size_t limit = kMaxChunkSize - prev;
  const size_t scan_end = std::min(n, limit);

  if (first_test < scan_end) {
    // The state before data[first_test]: only the 64 bytes before it matter.
    uint64_t h;
    if (first_test >= kGearWindow) {
      h = WarmUp(d + first_test);
    } else {
      h = hash_;
      for (size_t p = 0; p < first_test; ++p) h = Roll(h, d[p]);
    }
    const size_t hit = internal::FindGearHit(d, first_test, scan_end, &h);
    if (hit < scan_end) {
      pending_ = 0;
      hash_ = 0;
      return hit + 1;
    }
    hash_ = h;
  } else if (scan_end >= kGearWindow) {
    hash_ = WarmUp(d + scan_end);
  } else {
    for (size_t p = 0; p < scan_end; ++p) hash_ = Roll(hash_, d[p]);
  }

  if (scan_end == limit) {  // forced cut at the maximum chunk size
    pending_ = 0;
    hash_ = 0;
    return limit;
  }
  pending_ += n;
  return 0;
}

uint64_t Chunker::Finish() {
  const uint64_t last = pending_;
  pending_ = 0;
  hash_ = 0;
  return last;
}

bool EndsOnChunkerCut(std::span<const uint8_t> chunk) {
  if (chunk.size() < kMinChunkSize || chunk.size() > kMaxChunkSize) return false;
  return chunk.size() == kMaxChunkSize || IsHit(WarmUp(chunk.data() + chunk.size()));
}

std::vector<uint64_t> ChunkBoundaries(std::span<const uint8_t> data) {
  std::vector<uint64_t> ends;
  ends.reserve(data.size() / kTargetChunkSize + 2);
  Chunker chunker;
  size_t pos = 0;
  while (pos < data.size()) {
    const size_t n = chunker.NextBoundary(data.subspan(pos));
    if (n == 0) break;
    pos += n;
    ends.push_back(pos);
  }
  if (chunker.Finish() > 0) ends.push_back(data.size());
  return ends;
}

}  // namespace xet
