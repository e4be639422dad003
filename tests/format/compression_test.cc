// Chunk compression: round trips for every scheme, LZ4 frame shape, the choice policy, and
// rejection of malformed payloads.
#include "format/compression.h"

#include <gtest/gtest.h>
#include <lz4frame.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "format/bg4.h"
#include "format/xorb_limits.h"
#include "support/test_support.h"

namespace xet {
namespace {

// float32 samples of a smooth signal plus small noise: typical model-weight/sensor data.
std::vector<uint8_t> FloatLikeBytes(size_t n, uint64_t seed) {
  const auto noise = testing::RandomBytes(n, seed);
  std::vector<uint8_t> out(n);
  for (size_t i = 0; i + 4 <= n; i += 4) {
    const float v =
        std::sin(static_cast<float>(i) * 0.001f) * 0.02f + static_cast<float>(noise[i]) * 1e-5f;
    std::memcpy(out.data() + i, &v, 4);
  }
  for (size_t i = n - n % 4; i < n; ++i) out[i] = noise[i];
  return out;
}

// Little-endian u32 counters below 2^16: high bytes are zero.
std::vector<uint8_t> IntLikeBytes(size_t n, uint64_t seed) {
  const auto noise = testing::RandomBytes(n, seed);
  std::vector<uint8_t> out(n, 0);
  for (size_t i = 0; i + 4 <= n; i += 4) {
    const uint32_t v = static_cast<uint32_t>(i / 4 * 3 + noise[i] % 7) & 0xFFFF;
    std::memcpy(out.data() + i, &v, 4);
  }
  return out;
}

struct Kind {
  const char* name;
  std::vector<uint8_t> (*make)(size_t, uint64_t);
};

const Kind kKinds[] = {
    {"random", testing::RandomBytes},
    {"text", testing::TextLikeBytes},
    {"constant", [](size_t n, uint64_t) { return std::vector<uint8_t>(n, 0x3b); }},
    {"float", FloatLikeBytes},
    {"int", IntLikeBytes},
};

const size_t kSizes[] = {1,  2,    3,    4,     5,     6,     7,      63,    64,
                         65, 1000, 4099, 65535, 65536, 65537, 131071, 131072};

const CompressionScheme kSchemes[] = {CompressionScheme::kNone, CompressionScheme::kLz4,
                                      CompressionScheme::kBg4Lz4};

TEST(Compression, RoundTripEverySchemeKindAndSize) {
  ChunkCodec codec;
  std::vector<uint8_t> payload(ChunkCodec::MaxCompressedSize(kXorbMaxChunkSize));
  std::vector<uint8_t> back;
  for (const Kind& kind : kKinds) {
    for (size_t n : kSizes) {
      const auto raw = kind.make(n, n * 7 + 1);
      for (CompressionScheme s : kSchemes) {
        Result<size_t> size = codec.CompressWith(s, raw, payload);
        ASSERT_TRUE(size.ok()) << size.status().ToString();
        back.assign(n, 0xEE);
        const std::span<const uint8_t> p(payload.data(), *size);
        Status st = codec.Decompress(s, p, back);
        ASSERT_TRUE(st.ok()) << kind.name << " n=" << n << " " << CompressionSchemeName(s) << ": "
                             << st.ToString();
        ASSERT_EQ(back, raw) << kind.name << " n=" << n << " " << CompressionSchemeName(s);
      }
    }
  }
}

TEST(Compression, FramesMatchTheReferenceShape) {
  ChunkCodec codec;
  std::vector<uint8_t> payload(ChunkCodec::MaxCompressedSize(kXorbMaxChunkSize));
  for (size_t n : {size_t{100}, size_t{65536}, size_t{65537}, size_t{131072}}) {
    const auto raw = testing::TextLikeBytes(n, 5);
    Result<size_t> size = codec.CompressWith(CompressionScheme::kLz4, raw, payload);
    ASSERT_TRUE(size.ok());
    ASSERT_GE(*size, 7u);
    EXPECT_EQ(payload[0], 0x04);
    EXPECT_EQ(payload[1], 0x22);
    EXPECT_EQ(payload[2], 0x4d);
    EXPECT_EQ(payload[3], 0x18);
    EXPECT_EQ(payload[4], 0x60) << "FLG: independent blocks, no checksums, no content size";
    EXPECT_EQ(payload[5], n <= 65536 ? 0x40 : 0x50) << "BD for n=" << n;
  }
}

TEST(Compression, DecodesFramesOfOtherShapes) {
  // Linked blocks, checksums, content size, 4 MiB block size, several blocks: a general
  // decoder must accept all of them.
  const auto raw = testing::TextLikeBytes(131072, 9);
  LZ4F_preferences_t prefs;
  std::memset(&prefs, 0, sizeof(prefs));
  prefs.frameInfo.blockSizeID = LZ4F_max64KB;
  prefs.frameInfo.blockMode = LZ4F_blockLinked;
  prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
  prefs.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
  prefs.frameInfo.contentSize = raw.size();
  std::vector<uint8_t> frame(LZ4F_compressFrameBound(raw.size(), &prefs));
  size_t n = LZ4F_compressFrame(frame.data(), frame.size(), raw.data(), raw.size(), &prefs);
  ASSERT_FALSE(LZ4F_isError(n));
  frame.resize(n);
  std::vector<uint8_t> back;
  ASSERT_TRUE(DecompressChunk(CompressionScheme::kLz4, frame, raw.size(), &back).ok());
  EXPECT_EQ(back, raw);

  prefs.frameInfo.blockSizeID = LZ4F_max4MB;
  prefs.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum;
  prefs.frameInfo.blockChecksumFlag = LZ4F_noBlockChecksum;
  prefs.frameInfo.contentSize = 0;
  frame.resize(LZ4F_compressFrameBound(raw.size(), &prefs));
  n = LZ4F_compressFrame(frame.data(), frame.size(), raw.data(), raw.size(), &prefs);
  ASSERT_FALSE(LZ4F_isError(n));
  frame.resize(n);
  ASSERT_TRUE(DecompressChunk(CompressionScheme::kLz4, frame, raw.size(), &back).ok());
  EXPECT_EQ(back, raw);
}

TEST(Compression, PolicyStoresIncompressibleChunksRaw) {
  const auto raw = testing::RandomBytes(65536, 1);
  for (CompressionPolicy p : {CompressionPolicy::kPredict, CompressionPolicy::kBruteForce,
                              CompressionPolicy::kLz4, CompressionPolicy::kNone}) {
    std::vector<uint8_t> out;
    Result<CompressionScheme> s = CompressChunk(raw, p, &out);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(*s, CompressionScheme::kNone);
    EXPECT_EQ(out, raw);
  }
  // Tiny chunks never shrink under LZ4's frame overhead.
  std::vector<uint8_t> out;
  Result<CompressionScheme> s =
      CompressChunk(std::vector<uint8_t>(5, 0), CompressionPolicy::kPredict, &out);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, CompressionScheme::kNone);
}

TEST(Compression, PolicyChoosesLz4ForTextAndBg4ForNumbers) {
  std::vector<uint8_t> out;
  Result<CompressionScheme> s =
      CompressChunk(testing::TextLikeBytes(65536, 2), CompressionPolicy::kPredict, &out);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, CompressionScheme::kLz4);
  s = CompressChunk(IntLikeBytes(65536, 2), CompressionPolicy::kPredict, &out);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, CompressionScheme::kBg4Lz4);
  s = CompressChunk(FloatLikeBytes(65536, 2), CompressionPolicy::kPredict, &out);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, CompressionScheme::kBg4Lz4);
  s = CompressChunk(testing::TextLikeBytes(65536, 2), CompressionPolicy::kNone, &out);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, CompressionScheme::kNone);
}

TEST(Compression, PredictorAgreesWithBruteForce) {
  ChunkCodec codec;
  std::vector<uint8_t> a(ChunkCodec::MaxCompressedSize(kXorbMaxChunkSize));
  std::vector<uint8_t> b(a.size());
  for (const Kind& kind : kKinds) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      const auto raw = kind.make(65536 + seed, seed);
      Result<ChunkCodec::Compressed> predicted =
          codec.Compress(raw, CompressionPolicy::kPredict, a);
      Result<ChunkCodec::Compressed> best = codec.Compress(raw, CompressionPolicy::kBruteForce, b);
      ASSERT_TRUE(predicted.ok() && best.ok());
      EXPECT_LE(best->size, predicted->size);
      // On these data kinds the predictor is within 2% of the best choice.
      EXPECT_LE(predicted->size, best->size + best->size / 50)
          << kind.name << ": predicted " << CompressionSchemeName(predicted->scheme) << " "
          << predicted->size << ", best " << CompressionSchemeName(best->scheme) << " "
          << best->size;
      // And brute force is never worse than any single scheme.
      for (CompressionScheme s : {CompressionScheme::kLz4, CompressionScheme::kBg4Lz4}) {
        Result<size_t> n = codec.CompressWith(s, raw, a);
        ASSERT_TRUE(n.ok());
        EXPECT_LE(best->size, *n);
      }
      EXPECT_LE(best->size, raw.size());
      // Both decode.
      std::vector<uint8_t> back(raw.size());
      ASSERT_TRUE(
          codec.Decompress(best->scheme, std::span<const uint8_t>(b.data(), best->size), back)
              .ok());
      EXPECT_EQ(back, raw);
    }
  }
}

TEST(Compression, Bg4Predictor) {
  EXPECT_FALSE(PredictBg4Benefit({}));
  EXPECT_FALSE(PredictBg4Benefit(std::vector<uint8_t>(63, 0)));
  EXPECT_FALSE(PredictBg4Benefit(testing::RandomBytes(131072, 4)));
  EXPECT_FALSE(PredictBg4Benefit(testing::TextLikeBytes(131072, 4)));
  EXPECT_FALSE(PredictBg4Benefit(std::vector<uint8_t>(131072, 1)));
  EXPECT_TRUE(PredictBg4Benefit(FloatLikeBytes(131072, 4)));
  EXPECT_TRUE(PredictBg4Benefit(IntLikeBytes(131072, 4)));
  // Short chunks use one window.
  EXPECT_TRUE(PredictBg4Benefit(IntLikeBytes(200, 4)));
}

class CompressionErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    raw_ = testing::TextLikeBytes(50000, 11);
    ASSERT_TRUE(CompressChunk(raw_, CompressionPolicy::kLz4, &frame_).ok());
  }
  Status Decode(const std::vector<uint8_t>& payload, size_t expected,
                CompressionScheme s = CompressionScheme::kLz4) {
    std::vector<uint8_t> out(expected);
    return codec_.Decompress(s, payload, out);
  }
  std::vector<uint8_t> raw_;
  std::vector<uint8_t> frame_;
  ChunkCodec codec_;
};

TEST_F(CompressionErrors, WrongExpectedSize) {
  Status st = Decode(frame_, raw_.size() - 1);
  EXPECT_EQ(st.code(), Status::Code::kCorruption);
  EXPECT_NE(st.message().find("does not end"), std::string::npos) << st.ToString();
  st = Decode(frame_, raw_.size() + 1);
  EXPECT_EQ(st.code(), Status::Code::kCorruption);
  EXPECT_NE(st.message().find("decodes to 50000"), std::string::npos) << st.ToString();
  EXPECT_TRUE(Decode(frame_, raw_.size()).ok());  // the codec recovers after errors
}

TEST_F(CompressionErrors, TruncatedAtEveryLength) {
  for (size_t len = 0; len < frame_.size(); ++len) {
    std::vector<uint8_t> cut(frame_.begin(), frame_.begin() + static_cast<long>(len));
    Status st = Decode(cut, raw_.size());
    ASSERT_FALSE(st.ok()) << "len=" << len;
    ASSERT_EQ(st.code(), Status::Code::kCorruption) << st.ToString();
  }
}

TEST_F(CompressionErrors, TrailingGarbage) {
  auto longer = frame_;
  longer.push_back(0);
  Status st = Decode(longer, raw_.size());
  EXPECT_EQ(st.code(), Status::Code::kCorruption);
  EXPECT_NE(st.message().find("trailing"), std::string::npos) << st.ToString();
  // A second frame after the first is trailing garbage too.
  longer = frame_;
  longer.insert(longer.end(), frame_.begin(), frame_.end());
  EXPECT_FALSE(Decode(longer, raw_.size()).ok());
}

TEST_F(CompressionErrors, BadMagicAndHeader) {
  auto bad = frame_;
  bad[0] ^= 1;
  Status st = Decode(bad, raw_.size());
  EXPECT_EQ(st.code(), Status::Code::kCorruption);
  EXPECT_NE(st.message().find("magic"), std::string::npos);
  // A skippable frame is not an LZ4 data frame.
  std::vector<uint8_t> skippable = {0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0};
  EXPECT_FALSE(Decode(skippable, 1).ok());
  bad = frame_;
  bad[4] = 0x00;  // FLG with version 0
  EXPECT_EQ(Decode(bad, raw_.size()).code(), Status::Code::kCorruption);
  bad = frame_;
  bad[6] ^= 0xFF;  // header checksum
  EXPECT_EQ(Decode(bad, raw_.size()).code(), Status::Code::kCorruption);
  bad = frame_;
  bad[7] = 0xFF;  // block size beyond the frame's maximum
  bad[8] = 0xFF;
  bad[9] = 0xFF;
  bad[10] = 0x7F;
  EXPECT_EQ(Decode(bad, raw_.size()).code(), Status::Code::kCorruption);
}

TEST_F(CompressionErrors, CorruptBlockDataNeverCrashes) {
  // LZ4 has no checksum here, so a flipped data byte may still decode (to other bytes); it
  // must never read or write out of bounds, and a wrong length is always caught.
  for (size_t i = 7; i < frame_.size(); i += 97) {
    auto bad = frame_;
    bad[i] ^= 0x5A;
    std::vector<uint8_t> out(raw_.size());
    (void)codec_.Decompress(CompressionScheme::kLz4, bad, out);
  }
  EXPECT_TRUE(Decode(frame_, raw_.size()).ok());
}

TEST_F(CompressionErrors, LimitsAndRawSizeMismatch) {
  EXPECT_EQ(Decode(frame_, kXorbMaxChunkSize + 1).code(), Status::Code::kInvalidArgument);
  std::vector<uint8_t> raw(10, 1);
  EXPECT_EQ(Decode(raw, 11, CompressionScheme::kNone).code(), Status::Code::kCorruption);
  EXPECT_EQ(Decode(raw, 9, CompressionScheme::kNone).code(), Status::Code::kCorruption);
  EXPECT_TRUE(Decode(raw, 10, CompressionScheme::kNone).ok());
  EXPECT_EQ(Decode(raw, 10, static_cast<CompressionScheme>(3)).code(),
            Status::Code::kInvalidArgument);
  std::vector<uint8_t> big(kXorbMaxChunkSize + 1);
  std::vector<uint8_t> out;
  EXPECT_EQ(CompressChunk(big, CompressionPolicy::kLz4, &out).status().code(),
            Status::Code::kInvalidArgument);
  std::vector<uint8_t> small_dst(10);
  EXPECT_EQ(codec_.CompressWith(CompressionScheme::kLz4, raw_, small_dst).status().code(),
            Status::Code::kInvalidArgument);
}

TEST(Compression, SchemeNames) {
  EXPECT_STREQ(CompressionSchemeName(CompressionScheme::kNone), "none");
  EXPECT_STREQ(CompressionSchemeName(CompressionScheme::kLz4), "lz4");
  EXPECT_STREQ(CompressionSchemeName(CompressionScheme::kBg4Lz4), "bg4-lz4");
  EXPECT_TRUE(IsKnownCompressionScheme(2));
  EXPECT_FALSE(IsKnownCompressionScheme(3));
}

}  // namespace
}  // namespace xet
