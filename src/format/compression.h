// Chunk compression for xorb records (Xet spec, xorb.md, "Chunk Compression Schemes").
//
// Scheme 1 is the LZ4 *frame* format (magic 04 22 4d 18), never a bare LZ4 block. Frames
// written here match the reference writer's: independent blocks, no block or content
// checksum, no content size (FLG byte 0x60), the smallest block size that holds the chunk
// (BD 0x40 for <= 64 KiB, 0x50 for <= 256 KiB), default fast level. Scheme 2 is BG4 byte
// grouping (format/bg4.h) followed by the same LZ4 frame.
//
// Compression-choice policy (CompressionPolicy::kPredict, the default):
//   1. A cheap BG4 benefit predictor (PredictBg4Benefit) samples <= 4 KiB of the chunk and
//      compares the order-0 byte entropy of the whole sample with the mean entropy of its 4
//      byte-position groups (Miller-Madow bias-corrected). Numeric arrays (floats, ints)
//      have strongly position-dependent bytes (exponent/high bytes vs mantissa/low bytes),
//      so grouping lowers per-group entropy and gives LZ4 long runs; text, compressed and
//      random data show no difference. When the groups are at least kBg4EntropyGainBits
//      bits/byte lower, BG4+LZ4 is used, otherwise plain LZ4. Cost: one pass over 4 KiB and
//      ~1.3k table lookups per chunk, far below one LZ4 compression, so each chunk is
//      compressed exactly once. Measured on 64 KiB chunks: it picks BG4 for float32, bf16,
//      small int32 and int64 id columns (BG4 saves 6-45%) and LZ4 for text (BG4 would cost
//      ~90%). Known miss: float64 values with zeroed low mantissa bytes look position-
//      dependent but compress ~14% better with plain LZ4; use kBruteForce where that matters.
//   2. If the chosen compression does not shrink the chunk, it is stored uncompressed
//      (scheme 0), as the spec recommends.
// CompressionPolicy::kBruteForce instead compresses with both LZ4 and BG4+LZ4 and keeps the
// smallest of the two and the raw bytes (about 2x the CPU; used by tests to measure the
// predictor and by callers that prefer size over speed).
//
// Everything here is pure: no I/O, no threads, errors as Status values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "common/result.h"
#include "common/status.h"

// liblz4 frame contexts (lz4frame.h), kept opaque here.
struct LZ4F_cctx_s;
struct LZ4F_dctx_s;

namespace xet {

enum class CompressionScheme : uint8_t {
  kNone = 0,    // payload is the raw chunk
  kLz4 = 1,     // payload is one LZ4 frame of the raw chunk
  kBg4Lz4 = 2,  // payload is one LZ4 frame of Bg4Group(raw chunk)
};

// True for the scheme bytes defined above (0, 1, 2).
inline bool IsKnownCompressionScheme(uint8_t scheme) { return scheme <= 2; }
// "none", "lz4", "bg4-lz4", or "unknown".
const char* CompressionSchemeName(CompressionScheme scheme);

enum class CompressionPolicy : uint8_t {
  kPredict,     // predictor chooses LZ4 or BG4+LZ4; raw if that does not shrink (default)
  kBruteForce,  // try LZ4 and BG4+LZ4, keep the smallest; raw if neither shrinks
  kLz4,         // LZ4 only; raw if it does not shrink
  kNone,        // always store raw
};

// Threshold of the BG4 predictor: mean group entropy must be at least this many bits per
// byte below the whole-sample entropy.
inline constexpr double kBg4EntropyGainBits = 0.5;

// The BG4 predictor of CompressionPolicy::kPredict (see the top of this file). Reads at most
// 4 KiB of `chunk`; false for chunks shorter than 64 bytes.
bool PredictBg4Benefit(std::span<const uint8_t> chunk);

// A reusable compressor/decompressor: owns one LZ4 frame compression context, one
// decompression context and a scratch buffer of at most kXorbMaxChunkSize bytes, so hot
// loops pay for allocation once. Not thread-safe: use one per thread. Movable, not copyable.
class ChunkCodec {
 public:
  struct Compressed {
    CompressionScheme scheme = CompressionScheme::kNone;
    size_t size = 0;  // payload bytes written to dst
  };

  ChunkCodec();
  ~ChunkCodec();
  ChunkCodec(ChunkCodec&&) noexcept;
  ChunkCodec& operator=(ChunkCodec&&) noexcept;
  ChunkCodec(const ChunkCodec&) = delete;
  ChunkCodec& operator=(const ChunkCodec&) = delete;

  // The largest payload Compress/CompressWith can write for a raw_size-byte chunk (>=
  // raw_size, so it also covers storing the chunk raw).
  static size_t MaxCompressedSize(size_t raw_size);

  // Compresses `raw` with exactly `scheme` into dst and returns the payload size (which may
  // exceed raw.size(): no fallback to raw here).
  // Requires raw.size() <= kXorbMaxChunkSize and dst.size() >= MaxCompressedSize(raw.size());
  // otherwise InvalidArgument. Internal on an LZ4 failure (not expected for valid input).
  Result<size_t> CompressWith(CompressionScheme scheme, std::span<const uint8_t> raw,
                              std::span<uint8_t> dst);

  // Chooses the scheme for `raw` according to `policy` (see the top of this file), writes the
  // payload into dst and returns the scheme and payload size. The payload is never larger
  // than raw.size(); a raw payload is reported as kNone. Same requirements as CompressWith.
  Result<Compressed> Compress(std::span<const uint8_t> raw, CompressionPolicy policy,
                              std::span<uint8_t> dst);

  // Decodes `payload` of `scheme` into `out`, whose size is the exact expected uncompressed
  // size. Requires out.size() <= kXorbMaxChunkSize (else InvalidArgument). Returns
  // Corruption when the payload is not what the scheme requires: for kNone a size other
  // than out.size(); for LZ4 schemes anything but exactly one well-formed LZ4 frame (magic
  // 04 22 4d 18) that decodes to exactly out.size() bytes and ends exactly at the payload's
  // end. On error the contents of `out` are unspecified. Allocates nothing proportional
  // to the input (liblz4 keeps internal block buffers bounded by the largest frame block
  // size, 4 MiB, reused across calls).
  Status Decompress(CompressionScheme scheme, std::span<const uint8_t> payload,
                    std::span<uint8_t> out);

 private:
  struct CctxDeleter {
    void operator()(LZ4F_cctx_s* c) const;
  };
  struct DctxDeleter {
    void operator()(LZ4F_dctx_s* d) const;
  };

  Result<size_t> Lz4FrameCompress(std::span<const uint8_t> raw, std::span<uint8_t> dst);
  Status Lz4FrameDecompress(std::span<const uint8_t> frame, std::span<uint8_t> out);

  std::unique_ptr<LZ4F_cctx_s, CctxDeleter> cctx_;
  std::unique_ptr<LZ4F_dctx_s, DctxDeleter> dctx_;
  std::vector<uint8_t> scratch_;  // BG4-grouped bytes; second brute-force candidate
  std::vector<uint8_t> scratch2_;
};

// One-shot conveniences over a temporary ChunkCodec (they create LZ4 contexts per call: use
// a ChunkCodec in loops).
// Compresses `raw` by `policy` into *out (replacing its contents); returns the scheme.
Result<CompressionScheme> CompressChunk(std::span<const uint8_t> raw, CompressionPolicy policy,
                                        std::vector<uint8_t>* out);
// Decodes `payload` into *out, resized to expected_size (see ChunkCodec::Decompress).
Status DecompressChunk(CompressionScheme scheme, std::span<const uint8_t> payload,
                       size_t expected_size, std::vector<uint8_t>* out);

}  // namespace xet
