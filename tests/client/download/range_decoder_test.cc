// Unit tests for RangeDecoder: every term a range serves gets exactly the bytes of its
// written window, in order, from stored and LZ4 chunks alike; chunk hashes are computed
// when asked and checked against a cache entry's; inconsistent terms and damaged chunks
// are Corruption.
#include "client/download/range_decoder.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "format/compression.h"
#include "format/keyed_hash.h"

namespace xet {
namespace {

// Collects what the decoder hands each term.
class RecordingSink : public TermSink {
 public:
  void Prepare(uint32_t term, const TermPlacement&) override { prepared.push_back(term); }
  Status Put(uint32_t term, const TermPlacement&, uint64_t at,
             std::span<const uint8_t> bytes) override {
    std::vector<uint8_t>& t = terms[term];
    EXPECT_EQ(at, t.size()) << "term " << term << ": pieces out of order";
    t.insert(t.end(), bytes.begin(), bytes.end());
    return Status::Ok();
  }
  std::vector<uint32_t> prepared;
  std::map<uint32_t, std::vector<uint8_t>> terms;
};

std::vector<uint8_t> ChunkData(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + (i / 7));  // compressible
  return v;
}

struct EncodedChunk {
  ChunkRecord record;
  std::vector<uint8_t> payload;
};

EncodedChunk Encode(const std::vector<uint8_t>& raw, CompressionScheme scheme) {
  EncodedChunk e;
  if (scheme == CompressionScheme::kNone) {
    e.payload = raw;
  } else {
    ChunkCodec codec;
    e.payload.resize(ChunkCodec::MaxCompressedSize(raw.size()));
    auto n = codec.CompressWith(scheme, raw, e.payload);
    EXPECT_TRUE(n.ok());
    e.payload.resize(*n);
  }
  e.record = {0, static_cast<uint32_t>(e.payload.size()), static_cast<uint32_t>(raw.size()),
              static_cast<uint8_t>(scheme)};
  return e;
}

// A range of three chunks (100, 50, 80 bytes) serving three terms:
//   term 0: chunks [0, 2), all 150 bytes, skip 10, take 130;
//   term 1: chunk [1, 2) alone, skip 0, take 50 (a chunk shared by two terms);
//   term 2: chunks [2, 3), skip 20, take 0 (lies outside the block).
struct Fixture {
  std::vector<std::vector<uint8_t>> raw = {ChunkData(100, 1), ChunkData(50, 2), ChunkData(80, 3)};
  BlockPlan plan;
  RangeRef ref;
  Fixture() {
    plan.terms = {
        {0, 0, 2, 150, 10, 130, 0, 0}, {0, 1, 1, 50, 0, 50, 130, 0}, {0, 2, 1, 80, 20, 0, 0, 0}};
    ref.terms = {0, 1, 2};
  }
  std::vector<uint8_t> Window(std::initializer_list<size_t> chunks, size_t skip, size_t take) {
    std::vector<uint8_t> all;
    for (size_t c : chunks) all.insert(all.end(), raw[c].begin(), raw[c].end());
    return std::vector<uint8_t>(all.begin() + skip, all.begin() + skip + take);
  }
};

TEST(RangeDecoder, HandsEachTermItsWindow) {
  for (CompressionScheme scheme :
       {CompressionScheme::kNone, CompressionScheme::kLz4, CompressionScheme::kBg4Lz4}) {
    Fixture f;
    RecordingSink sink;
    RangeDecoder d;
    ASSERT_TRUE(d.Begin(f.plan, f.ref, 3, nullptr, /*hash_chunks=*/true, sink).ok());
    EXPECT_EQ(sink.prepared, (std::vector<uint32_t>{0, 1, 2}));
    for (uint32_t i = 0; i < 3; ++i) {
      const EncodedChunk e = Encode(f.raw[i], scheme);
      ASSERT_TRUE(d.Chunk(i, e.record, e.payload).ok());
    }
    ASSERT_TRUE(d.Finish().ok());
    EXPECT_EQ(sink.terms[0], f.Window({0, 1}, 10, 130));
    EXPECT_EQ(sink.terms[1], f.Window({1}, 0, 50));
    EXPECT_EQ(sink.terms.count(2), 0u);  // take 0: nothing written
    ASSERT_EQ(d.infos().size(), 3u);
    for (uint32_t i = 0; i < 3; ++i) {
      EXPECT_EQ(d.infos()[i].hash, ChunkHash(f.raw[i]));
      EXPECT_EQ(d.infos()[i].size, f.raw[i].size());
    }
  }
}

TEST(RangeDecoder, HashesOnlyWhenAsked) {
  Fixture f;
  RecordingSink sink;
  RangeDecoder d;
  ASSERT_TRUE(d.Begin(f.plan, f.ref, 3, nullptr, /*hash_chunks=*/false, sink).ok());
  for (uint32_t i = 0; i < 3; ++i) {
    const EncodedChunk e = Encode(f.raw[i], CompressionScheme::kNone);
    ASSERT_TRUE(d.Chunk(i, e.record, e.payload).ok());
  }
  EXPECT_TRUE(d.Finish().ok());
  EXPECT_TRUE(d.infos().empty());
}

TEST(RangeDecoder, ChecksAgainstExpectedChunks) {
  Fixture f;
  std::vector<ChunkInfo> expected;
  for (const auto& c : f.raw) expected.push_back({ChunkHash(c), c.size()});
  RecordingSink sink;
  RangeDecoder d;
  // A cache entry with another chunk count.
  std::vector<ChunkInfo> shorter(expected.begin(), expected.end() - 1);
  EXPECT_EQ(d.Begin(f.plan, f.ref, 3, &shorter, false, sink).code(), Status::Code::kCorruption);
  // Chunk 1 differs from what the entry recorded.
  expected[1].hash = ChunkHash(f.raw[0]);
  ASSERT_TRUE(d.Begin(f.plan, f.ref, 3, &expected, false, sink).ok());
  const EncodedChunk c0 = Encode(f.raw[0], CompressionScheme::kNone);
  const EncodedChunk c1 = Encode(f.raw[1], CompressionScheme::kNone);
  EXPECT_TRUE(d.Chunk(0, c0.record, c0.payload).ok());
  const Status st = d.Chunk(1, c1.record, c1.payload);
  EXPECT_NE(st.message().find("cached chunk 1 differs"), std::string::npos) << st.message();
}

TEST(RangeDecoder, RejectsInconsistentTermsAndDamagedChunks) {
  Fixture f;
  RecordingSink sink;
  RangeDecoder d;
  // Term 2 needs chunk 2: a range of two chunks does not hold it.
  Status st = d.Begin(f.plan, f.ref, 2, nullptr, false, sink);
  EXPECT_NE(st.message().find("term 2 lies outside its fetch range"), std::string::npos)
      << st.message();
  // A term whose chunks hold fewer bytes than its unpacked_length.
  f.plan.terms[1].unpacked_length = 51;
  ASSERT_TRUE(d.Begin(f.plan, f.ref, 3, nullptr, false, sink).ok());
  for (uint32_t i = 0; i < 3; ++i) {
    const EncodedChunk e = Encode(f.raw[i], CompressionScheme::kNone);
    ASSERT_TRUE(d.Chunk(i, e.record, e.payload).ok());
  }
  st = d.Finish();
  EXPECT_NE(st.message().find("term 1: its chunks hold 50 bytes, the answer says 51"),
            std::string::npos)
      << st.message();
  // An LZ4 payload that does not decode.
  f.plan.terms[1].unpacked_length = 50;
  ASSERT_TRUE(d.Begin(f.plan, f.ref, 3, nullptr, false, sink).ok());
  EncodedChunk e = Encode(f.raw[0], CompressionScheme::kLz4);
  e.payload[e.payload.size() / 2] ^= 0xff;
  e.payload.resize(e.payload.size() - 3);
  e.record.csize = static_cast<uint32_t>(e.payload.size());
  st = d.Chunk(0, e.record, e.payload);
  EXPECT_EQ(st.code(), Status::Code::kCorruption);
  EXPECT_NE(st.message().find("chunk 0"), std::string::npos) << st.message();
}

// A sink's error stops the range and is returned as is.
TEST(RangeDecoder, ReturnsTheSinksError) {
  class FailingSink : public TermSink {
   public:
    void Prepare(uint32_t, const TermPlacement&) override {}
    Status Put(uint32_t, const TermPlacement&, uint64_t, std::span<const uint8_t>) override {
      return Status::IoError("disk full");
    }
  } sink;
  Fixture f;
  RangeDecoder d;
  ASSERT_TRUE(d.Begin(f.plan, f.ref, 3, nullptr, false, sink).ok());
  const EncodedChunk e = Encode(f.raw[0], CompressionScheme::kNone);
  EXPECT_EQ(d.Chunk(0, e.record, e.payload).code(), Status::Code::kIoError);
}

}  // namespace
}  // namespace xet
