#include "format/compression.h"

#include <lz4frame.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>

#include "format/bg4.h"
#include "format/xorb_limits.h"

namespace xet {
namespace {

constexpr uint8_t kLz4FrameMagic[4] = {0x04, 0x22, 0x4d, 0x18};

// Frame preferences matching the reference writer: independent blocks, no checksums, no
// content size, fast level, and the smallest block size that holds the whole chunk (so a
// chunk is one block). autoFlush lets liblz4 compress straight from the caller's buffer.
LZ4F_preferences_t FramePrefs(size_t raw_size) {
  LZ4F_preferences_t prefs;
  std::memset(&prefs, 0, sizeof(prefs));
  if (raw_size <= 64 * 1024) {
    prefs.frameInfo.blockSizeID = LZ4F_max64KB;
  } else if (raw_size <= 256 * 1024) {
    prefs.frameInfo.blockSizeID = LZ4F_max256KB;
  } else if (raw_size <= 1024 * 1024) {
    prefs.frameInfo.blockSizeID = LZ4F_max1MB;
  } else {
    prefs.frameInfo.blockSizeID = LZ4F_max4MB;
  }
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  prefs.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum;
  prefs.frameInfo.blockChecksumFlag = LZ4F_noBlockChecksum;
  prefs.frameInfo.contentSize = 0;
  prefs.compressionLevel = 0;
  prefs.autoFlush = 1;
  return prefs;
}

std::string Lz4Error(const char* what, size_t code) {
  return std::string(what) + ": " + LZ4F_getErrorName(code);
}

// c * log2(c) for c in [0, 4096]: the sample of PredictBg4Benefit has at most 4096 bytes.
constexpr size_t kSampleBytes = 4096;
const std::array<float, kSampleBytes + 1>& CLog2CTable() {
  static const std::array<float, kSampleBytes + 1> table = [] {
    std::array<float, kSampleBytes + 1> t{};
    for (size_t c = 1; c <= kSampleBytes; ++c) {
      const double d = static_cast<double>(c);
      t[c] = static_cast<float>(d * std::log2(d));
    }
    return t;
  }();
  return table;
}

// Miller-Madow corrected order-0 entropy, in bits per byte, of a histogram of n samples.
double Entropy(const uint32_t* hist, uint32_t n) {
  if (n == 0) return 0.0;
  const auto& clog = CLog2CTable();
  double sum = 0.0;
  int nonzero = 0;
  for (int b = 0; b < 256; ++b) {
    if (hist[b] != 0) {
      sum += clog[hist[b]];
      ++nonzero;
    }
  }
  const double dn = static_cast<double>(n);
  const double h = std::log2(dn) - sum / dn;
  return h + static_cast<double>(nonzero - 1) / (2.0 * dn * std::log(2.0));
}

}  // namespace

const char* CompressionSchemeName(CompressionScheme scheme) {
  switch (scheme) {
    case CompressionScheme::kNone:
      return "none";
    case CompressionScheme::kLz4:
      return "lz4";
    case CompressionScheme::kBg4Lz4:
      return "bg4-lz4";
  }
  return "unknown";
}

bool PredictBg4Benefit(std::span<const uint8_t> chunk) {
  const size_t n = chunk.size();
  if (n < 64) return false;
  // Up to 16 windows of 256 bytes spread evenly over the chunk; every window starts at a
  // multiple of 4 so position mod 4 is the BG4 group.
  constexpr size_t kWindow = 256;
  constexpr size_t kMaxWindows = kSampleBytes / kWindow;
  size_t window = kWindow;
  size_t windows = std::min(kMaxWindows, n / kWindow);
  if (windows == 0) {
    windows = 1;
    window = n & ~size_t{3};
  }
  const size_t span = n - window;  // window starts range over [0, span]
  uint32_t hist[4][256] = {};
  for (size_t w = 0; w < windows; ++w) {
    const size_t start = windows == 1 ? 0 : (span * w / (windows - 1)) & ~size_t{3};
    const uint8_t* p = chunk.data() + start;
    for (size_t j = 0; j < window; j += 4) {
      ++hist[0][p[j]];
      ++hist[1][p[j + 1]];
      ++hist[2][p[j + 2]];
      ++hist[3][p[j + 3]];
    }
  }
  uint32_t all[256];
  for (int b = 0; b < 256; ++b) all[b] = hist[0][b] + hist[1][b] + hist[2][b] + hist[3][b];
  const uint32_t per_group = static_cast<uint32_t>(windows * window / 4);
  double groups = 0.0;
  for (const auto& h : hist) groups += Entropy(h, per_group);
  groups /= 4.0;
  const double whole = Entropy(all, per_group * 4);
  return whole - groups >= kBg4EntropyGainBits;
}

void ChunkCodec::CctxDeleter::operator()(LZ4F_cctx_s* c) const { LZ4F_freeCompressionContext(c); }
void ChunkCodec::DctxDeleter::operator()(LZ4F_dctx_s* d) const { LZ4F_freeDecompressionContext(d); }

ChunkCodec::ChunkCodec() {
  LZ4F_cctx* c = nullptr;
  if (!LZ4F_isError(LZ4F_createCompressionContext(&c, LZ4F_VERSION))) cctx_.reset(c);
  LZ4F_dctx* d = nullptr;
  if (!LZ4F_isError(LZ4F_createDecompressionContext(&d, LZ4F_VERSION))) dctx_.reset(d);
}

ChunkCodec::~ChunkCodec() = default;
ChunkCodec::ChunkCodec(ChunkCodec&&) noexcept = default;
ChunkCodec& ChunkCodec::operator=(ChunkCodec&&) noexcept = default;

size_t ChunkCodec::MaxCompressedSize(size_t raw_size) {
  const LZ4F_preferences_t prefs = FramePrefs(raw_size);
  return std::max(raw_size, LZ4F_compressFrameBound(raw_size, &prefs));
}

Result<size_t> ChunkCodec::Lz4FrameCompress(std::span<const uint8_t> raw, std::span<uint8_t> dst) {
  if (!cctx_) return Status::Internal("LZ4 compression context could not be allocated");
  const LZ4F_preferences_t prefs = FramePrefs(raw.size());
  uint8_t* out = dst.data();
  size_t cap = dst.size();
  size_t pos = 0;
  size_t r = LZ4F_compressBegin(cctx_.get(), out, cap, &prefs);
  if (LZ4F_isError(r)) return Status::Internal(Lz4Error("LZ4F_compressBegin", r));
  pos += r;
  if (!raw.empty()) {
    r = LZ4F_compressUpdate(cctx_.get(), out + pos, cap - pos, raw.data(), raw.size(), nullptr);
    if (LZ4F_isError(r)) return Status::Internal(Lz4Error("LZ4F_compressUpdate", r));
    pos += r;
  }
  r = LZ4F_compressEnd(cctx_.get(), out + pos, cap - pos, nullptr);
  if (LZ4F_isError(r)) return Status::Internal(Lz4Error("LZ4F_compressEnd", r));
  pos += r;
  return pos;
}

Result<size_t> ChunkCodec::CompressWith(CompressionScheme scheme, std::span<const uint8_t> raw,
                                        std::span<uint8_t> dst) {
  if (raw.size() > kXorbMaxChunkSize) {
    return Status::InvalidArgument("chunk of " + std::to_string(raw.size()) +
                                   " bytes exceeds the 131072-byte maximum");
  }
  if (dst.size() < MaxCompressedSize(raw.size())) {
    return Status::InvalidArgument("compression output buffer is smaller than MaxCompressedSize");
  }
  switch (scheme) {
    case CompressionScheme::kNone:
      if (!raw.empty()) std::memcpy(dst.data(), raw.data(), raw.size());
      return raw.size();
    case CompressionScheme::kLz4:
      return Lz4FrameCompress(raw, dst);
    case CompressionScheme::kBg4Lz4:
      scratch_.resize(raw.size());
      Bg4Group(raw, scratch_);
      return Lz4FrameCompress(scratch_, dst);
  }
  return Status::InvalidArgument("unknown compression scheme " +
                                 std::to_string(static_cast<int>(scheme)));
}

Result<ChunkCodec::Compressed> ChunkCodec::Compress(std::span<const uint8_t> raw,
                                                    CompressionPolicy policy,
                                                    std::span<uint8_t> dst) {
  auto store_raw = [&]() -> Result<Compressed> {
    XET_ASSIGN_OR_RETURN(size_t n, CompressWith(CompressionScheme::kNone, raw, dst));
    return Compressed{CompressionScheme::kNone, n};
  };
  CompressionScheme scheme = CompressionScheme::kLz4;
  switch (policy) {
    case CompressionPolicy::kNone:
      return store_raw();
    case CompressionPolicy::kLz4:
      break;
    case CompressionPolicy::kPredict:
      if (PredictBg4Benefit(raw)) scheme = CompressionScheme::kBg4Lz4;
      break;
    case CompressionPolicy::kBruteForce: {
      XET_ASSIGN_OR_RETURN(size_t lz4_size, CompressWith(CompressionScheme::kLz4, raw, dst));
      scratch2_.resize(MaxCompressedSize(raw.size()));
      XET_ASSIGN_OR_RETURN(size_t bg4_size,
                           CompressWith(CompressionScheme::kBg4Lz4, raw, scratch2_));
      if (std::min(lz4_size, bg4_size) >= raw.size()) return store_raw();
      if (bg4_size < lz4_size) {
        std::memcpy(dst.data(), scratch2_.data(), bg4_size);
        return Compressed{CompressionScheme::kBg4Lz4, bg4_size};
      }
      return Compressed{CompressionScheme::kLz4, lz4_size};
    }
  }
  XET_ASSIGN_OR_RETURN(size_t size, CompressWith(scheme, raw, dst));
  if (size >= raw.size()) return store_raw();
  return Compressed{scheme, size};
}

Status ChunkCodec::Lz4FrameDecompress(std::span<const uint8_t> frame, std::span<uint8_t> out) {
  if (!dctx_) return Status::Internal("LZ4 decompression context could not be allocated");
  if (frame.size() < 4 || std::memcmp(frame.data(), kLz4FrameMagic, 4) != 0) {
    return Status::Corruption("payload is not an LZ4 frame (magic 04 22 4d 18 missing)");
  }
  LZ4F_resetDecompressionContext(dctx_.get());
  LZ4F_decompressOptions_t opts;
  std::memset(&opts, 0, sizeof(opts));
  opts.stableDst = 1;  // `out` stays put for the whole frame
  size_t in_pos = 0;
  size_t out_pos = 0;
  for (;;) {
    size_t in_len = frame.size() - in_pos;
    size_t out_len = out.size() - out_pos;
    const size_t hint = LZ4F_decompress(dctx_.get(), out.data() + out_pos, &out_len,
                                        frame.data() + in_pos, &in_len, &opts);
    if (LZ4F_isError(hint)) {
      LZ4F_resetDecompressionContext(dctx_.get());
      return Status::Corruption(Lz4Error("malformed LZ4 frame", hint));
    }
    in_pos += in_len;
    out_pos += out_len;
    if (hint == 0) break;  // the frame ended
    if (in_len == 0 && out_len == 0) {
      // No progress: either the input ran out or the output is full before the frame's end.
      LZ4F_resetDecompressionContext(dctx_.get());
      if (out_pos == out.size()) {
        return Status::Corruption("LZ4 frame does not end after the expected " +
                                  std::to_string(out.size()) +
                                  " bytes (it decodes to more, or is truncated)");
      }
      return Status::Corruption("LZ4 frame is truncated after " + std::to_string(out_pos) + " of " +
                                std::to_string(out.size()) + " bytes");
    }
  }
  if (out_pos != out.size()) {
    return Status::Corruption("LZ4 frame decodes to " + std::to_string(out_pos) +
                              " bytes, expected " + std::to_string(out.size()));
  }
  if (in_pos != frame.size()) {
    return Status::Corruption(std::to_string(frame.size() - in_pos) +
                              " trailing bytes after the LZ4 frame");
  }
  return Status::Ok();
}

Status ChunkCodec::Decompress(CompressionScheme scheme, std::span<const uint8_t> payload,
                              std::span<uint8_t> out) {
  if (out.size() > kXorbMaxChunkSize) {
    return Status::InvalidArgument("expected chunk size " + std::to_string(out.size()) +
                                   " exceeds the 131072-byte maximum");
  }
  switch (scheme) {
    case CompressionScheme::kNone:
      if (payload.size() != out.size()) {
        return Status::Corruption("uncompressed payload has " + std::to_string(payload.size()) +
                                  " bytes, expected " + std::to_string(out.size()));
      }
      if (!out.empty()) std::memcpy(out.data(), payload.data(), out.size());
      return Status::Ok();
    case CompressionScheme::kLz4:
      return Lz4FrameDecompress(payload, out);
    case CompressionScheme::kBg4Lz4: {
      scratch_.resize(out.size());
      XET_RETURN_IF_ERROR(Lz4FrameDecompress(payload, scratch_));
      Bg4Ungroup(scratch_, out);
      return Status::Ok();
    }
  }
  return Status::InvalidArgument("unknown compression scheme " +
                                 std::to_string(static_cast<int>(scheme)));
}

Result<CompressionScheme> CompressChunk(std::span<const uint8_t> raw, CompressionPolicy policy,
                                        std::vector<uint8_t>* out) {
  ChunkCodec codec;
  out->resize(ChunkCodec::MaxCompressedSize(raw.size()));
  XET_ASSIGN_OR_RETURN(ChunkCodec::Compressed c, codec.Compress(raw, policy, *out));
  out->resize(c.size);
  return c.scheme;
}

Status DecompressChunk(CompressionScheme scheme, std::span<const uint8_t> payload,
                       size_t expected_size, std::vector<uint8_t>* out) {
  if (expected_size > kXorbMaxChunkSize) {
    return Status::InvalidArgument("expected chunk size " + std::to_string(expected_size) +
                                   " exceeds the 131072-byte maximum");
  }
  ChunkCodec codec;
  out->resize(expected_size);
  return codec.Decompress(scheme, payload, *out);
}

}  // namespace xet
