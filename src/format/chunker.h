// Content-defined chunking (Xet spec, chunking.md): a gearhash rolling hash over the
// stream, cut where the hash's top 16 bits are zero, with chunk sizes clamped to
// [8 KiB, 128 KiB] (the last chunk of a stream may be shorter).
//
// Streaming: feeding the same bytes in blocks of any sizes yields the same boundaries.
// Speed: hashing starts only 64 bytes before the first position where a cut is allowed
// (the min-size skip-ahead: the hash at any position depends on the previous 64 bytes
// only), which is bit-identical to the spec's byte-at-a-time loop (tests compare them).
// The scan runs eight bytes per round: the hash after byte k of a round is
// (h << (k + 1)) + u_k, where u_k folds the round's table values and does not depend on h,
// so rounds are chained by one shift and add instead of one dependent update per byte
// (the byte-at-a-time scan was bound by that chain's latency; measured in
// docs/bench-log/client.md). A 4-lane interleaved variant was tried earlier and dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace xet {

inline constexpr size_t kMinChunkSize = 8 * 1024;
inline constexpr size_t kTargetChunkSize = 64 * 1024;
inline constexpr size_t kMaxChunkSize = 128 * 1024;
inline constexpr uint64_t kChunkBoundaryMask = 0xFFFF000000000000ULL;
inline constexpr size_t kGearWindow = 64;

class Chunker {
 public:
  Chunker() = default;

  // Scans `data`, the next bytes of the stream, for the end of the current chunk.
  // Returns n > 0 when data[0..n) completes the current chunk (the chunker then starts a
  // new chunk at data[n]; call again with the rest), or 0 when all of `data` belongs to
  // the current, still open chunk.
  size_t NextBoundary(std::span<const uint8_t> data);

  // Ends the stream. Returns the length of the final chunk (0 if the stream ended on a
  // boundary or was empty) and resets the chunker for a new stream.
  uint64_t Finish();

  // Bytes in the current open chunk.
  uint64_t pending() const { return pending_; }

 private:
  uint64_t pending_ = 0;  // bytes of the open chunk seen so far (< kMaxChunkSize)
  uint64_t hash_ = 0;     // gear hash of the open chunk's bytes seen so far
};

// Whether the Chunker, started at chunk[0] with no cut before chunk's last byte, would cut
// right after it: chunk.size() is in [kMinChunkSize, kMaxChunkSize] and either equals
// kMaxChunkSize or the gear hash at the last byte has its top 16 bits zero (only the last
// 64 bytes are hashed). With bytes known to equal a chunk a compliant chunker cut (so no
// cut inside), this is the whole condition for the chunk to be what chunking from its
// start yields; it rules out a stream's final chunk, which ends where the stream did.
bool EndsOnChunkerCut(std::span<const uint8_t> chunk);

// Chunk end offsets (exclusive) of a whole in-memory buffer; the last is data.size().
// Empty for empty input.
std::vector<uint64_t> ChunkBoundaries(std::span<const uint8_t> data);

namespace internal {
// Index of the first p in [begin, end) at which the gear hash (continued from *hash, the
// state after data[begin-1]) has its top 16 bits zero, or `end` if none. Leaves in *hash
// the state after the returned position (after data[end-1] when none). Exposed for tests
// and benchmarks.
size_t FindGearHit(const uint8_t* data, size_t begin, size_t end, uint64_t* hash);
}  // namespace internal

}  // namespace xet
