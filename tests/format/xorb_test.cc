// Xorb chunk records: builder, record parser, parse-and-verify, single-chunk extraction,
// and every error path on hostile input.
#include "format/xorb.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "format/keyed_hash.h"
#include "format/merkle.h"
#include "support/test_support.h"

namespace xet {
namespace {

using Code = Status::Code;

// A record written by hand: header fields as given, then the payload.
void AppendRecord(std::vector<uint8_t>* out, uint8_t version, uint32_t compressed_size,
                  uint8_t scheme, uint32_t uncompressed_size, std::span<const uint8_t> payload) {
  out->push_back(version);
  for (int i = 0; i < 3; ++i) out->push_back(static_cast<uint8_t>(compressed_size >> (8 * i)));
  out->push_back(scheme);
  for (int i = 0; i < 3; ++i) out->push_back(static_cast<uint8_t>(uncompressed_size >> (8 * i)));
  out->insert(out->end(), payload.begin(), payload.end());
}

void AppendRawRecord(std::vector<uint8_t>* out, std::span<const uint8_t> chunk) {
  AppendRecord(out, 0, static_cast<uint32_t>(chunk.size()), 0, static_cast<uint32_t>(chunk.size()),
               chunk);
}

std::vector<uint8_t> Cat(const std::vector<std::vector<uint8_t>>& parts) {
  std::vector<uint8_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// Three chunks, one per scheme, hand-serialized.
struct SmallXorb {
  std::vector<std::vector<uint8_t>> chunks;
  std::vector<uint8_t> bytes;
  std::vector<size_t> ends;  // record end offsets
  Hash hash;
};

SmallXorb MakeSmallXorb() {
  SmallXorb x;
  x.chunks = {testing::TextLikeBytes(3000, 1), testing::RandomBytes(37, 2),
              std::vector<uint8_t>(1001, 9)};
  const CompressionScheme schemes[] = {CompressionScheme::kLz4, CompressionScheme::kNone,
                                       CompressionScheme::kBg4Lz4};
  ChunkCodec codec;
  std::vector<ChunkInfo> infos;
  for (size_t i = 0; i < 3; ++i) {
    std::vector<uint8_t> payload(ChunkCodec::MaxCompressedSize(x.chunks[i].size()));
    Result<size_t> n = codec.CompressWith(schemes[i], x.chunks[i], payload);
    EXPECT_TRUE(n.ok());
    payload.resize(*n);
    AppendRecord(&x.bytes, 0, static_cast<uint32_t>(*n), static_cast<uint8_t>(schemes[i]),
                 static_cast<uint32_t>(x.chunks[i].size()), payload);
    x.ends.push_back(x.bytes.size());
    infos.push_back({ChunkHash(x.chunks[i]), x.chunks[i].size()});
  }
  x.hash = XorbHash(infos);
  return x;
}

TEST(XorbHeader, EncodeDecode) {
  XorbChunkHeader h;
  h.version = 0;
  h.compressed_size = 0x123456;
  h.scheme = 2;
  h.uncompressed_size = 0x020000;
  uint8_t buf[8];
  EncodeXorbChunkHeader(h, buf);
  const uint8_t want[8] = {0x00, 0x56, 0x34, 0x12, 0x02, 0x00, 0x00, 0x02};
  EXPECT_EQ(std::memcmp(buf, want, 8), 0);
  const XorbChunkHeader d = DecodeXorbChunkHeader(buf);
  EXPECT_EQ(d.version, 0);
  EXPECT_EQ(d.compressed_size, 0x123456u);
  EXPECT_EQ(d.scheme, 2);
  EXPECT_EQ(d.uncompressed_size, 0x020000u);
}

TEST(Xorb, SmallXorbParsesAndVerifies) {
  const SmallXorb x = MakeSmallXorb();
  Result<XorbRecords> r = ParseXorbRecords(x.bytes);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->records.size(), 3u);
  EXPECT_EQ(r->records[0].offset, 0u);
  EXPECT_EQ(r->records[1].scheme, CompressionScheme::kNone);
  EXPECT_EQ(r->records[2].scheme, CompressionScheme::kBg4Lz4);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(r->records[i].end_offset(), x.ends[i]);
  EXPECT_EQ(r->end_offset, x.bytes.size());

  Result<VerifiedXorb> v = ParseAndVerifyXorb(x.bytes, x.hash);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->hash, x.hash);
  uint32_t unpacked = 0;
  for (size_t i = 0; i < 3; ++i) {
    unpacked += static_cast<uint32_t>(x.chunks[i].size());
    EXPECT_EQ(v->table.chunks[i].hash, ChunkHash(x.chunks[i]));
    EXPECT_EQ(v->table.chunks[i].size, x.chunks[i].size());
    EXPECT_EQ(v->table.boundary_offsets[i], x.ends[i]);
    EXPECT_EQ(v->table.unpacked_offsets[i], unpacked);
  }

  ChunkCodec codec;
  for (size_t i = 0; i < 3; ++i) {
    std::vector<uint8_t> out(r->records[i].uncompressed_size);
    ASSERT_TRUE(DecompressXorbRecord(x.bytes, r->records[i], codec, out).ok());
    EXPECT_EQ(out, x.chunks[i]);
  }
  // Walking with ExtractXorbChunk reconstructs the concatenated data.
  std::vector<uint8_t> all;
  size_t offset = 0;
  while (offset < x.bytes.size()) {
    Result<size_t> used =
        ExtractXorbChunk(std::span<const uint8_t>(x.bytes).subspan(offset), codec, &all);
    ASSERT_TRUE(used.ok()) << used.status().ToString();
    offset += *used;
  }
  EXPECT_EQ(all, Cat(x.chunks));
}

TEST(Xorb, EmptyXorb) {
  Result<XorbRecords> r = ParseXorbRecords({});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->records.empty());
  Result<VerifiedXorb> v = ParseAndVerifyXorb({}, Hash());
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->hash.IsZero());
}

TEST(Xorb, EveryPrefixOfASmallXorb) {
  const SmallXorb x = MakeSmallXorb();
  for (size_t len = 0; len <= x.bytes.size(); ++len) {
    const std::span<const uint8_t> prefix(x.bytes.data(), len);
    size_t complete = 0;
    while (complete < 3 && x.ends[complete] <= len) ++complete;
    const bool on_boundary = len == 0 || (complete > 0 && x.ends[complete - 1] == len);
    Result<XorbRecords> strict = ParseXorbRecords(prefix);
    ASSERT_EQ(strict.ok(), on_boundary) << "len=" << len;
    if (!strict.ok()) {
      EXPECT_EQ(strict.status().code(), Code::kInvalidArgument);
      const std::string want = "chunk " + std::to_string(complete) + " at offset " +
                               std::to_string(complete == 0 ? 0 : x.ends[complete - 1]);
      EXPECT_NE(strict.status().message().find(want), std::string::npos)
          << strict.status().ToString();
    }
    Result<XorbRecords> lenient = ParseXorbRecords(prefix, XorbTrailingBytes::kAllow);
    ASSERT_TRUE(lenient.ok()) << "len=" << len;
    EXPECT_EQ(lenient->records.size(), complete);
    EXPECT_EQ(lenient->end_offset, complete == 0 ? 0 : x.ends[complete - 1]);
    // Only the whole xorb verifies against its hash.
    Result<VerifiedXorb> v = ParseAndVerifyXorb(prefix, x.hash);
    ASSERT_EQ(v.ok(), len == x.bytes.size()) << "len=" << len;
    Result<VerifiedXorb> v2 = ParseAndVerifyXorb(prefix, x.hash, XorbTrailingBytes::kAllow);
    ASSERT_EQ(v2.ok(), len == x.bytes.size()) << "len=" << len;
    if (on_boundary && len != x.bytes.size()) {
      EXPECT_EQ(v.status().code(), Code::kCorruption);
      EXPECT_NE(v.status().message().find("hash mismatch"), std::string::npos);
    }
  }
}

Status VerifyStatus(const std::vector<uint8_t>& bytes) {
  return ParseAndVerifyXorb(bytes, std::nullopt).status();
}

TEST(Xorb, BadHeaderFields) {
  const SmallXorb x = MakeSmallXorb();
  const size_t second = x.ends[0];  // header of chunk 1 (uncompressed, 37 bytes)
  auto expect_error = [&](std::vector<uint8_t> bytes, const std::string& needle) {
    Status st = VerifyStatus(bytes);
    ASSERT_FALSE(st.ok()) << needle;
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
    EXPECT_NE(st.message().find("chunk 1 at offset " + std::to_string(second)), std::string::npos)
        << st.ToString();
    EXPECT_NE(st.message().find(needle), std::string::npos) << st.ToString();
    EXPECT_FALSE(ParseXorbRecords(bytes).ok());
    // Lenient parsing stops before the bad record.
    Result<XorbRecords> lenient = ParseXorbRecords(bytes, XorbTrailingBytes::kAllow);
    ASSERT_TRUE(lenient.ok());
    EXPECT_EQ(lenient->records.size(), 1u);
    EXPECT_EQ(lenient->end_offset, second);
  };
  auto b = x.bytes;
  b[second] = 1;
  expect_error(b, "version 1");
  b = x.bytes;
  b[second + 4] = 3;
  expect_error(b, "unknown compression scheme 3");
  b = x.bytes;
  b[second + 4] = 0xFF;
  expect_error(b, "unknown compression scheme 255");
  b = x.bytes;
  b[second + 5] = b[second + 6] = b[second + 7] = 0;  // uncompressed size 0
  expect_error(b, "uncompressed size 0");
  b = x.bytes;
  b[second + 5] = 0x01;  // 131073
  b[second + 6] = 0x00;
  b[second + 7] = 0x02;
  expect_error(b, "uncompressed size 131073");
  b = x.bytes;
  b[second + 1] = b[second + 2] = b[second + 3] = 0xFF;  // compressed size 2^24-1
  expect_error(b, "runs past the end");
  b = x.bytes;
  b[second + 1] = 36;  // raw record whose sizes differ
  expect_error(b, "compressed size 36 != uncompressed size 37");
}

TEST(Xorb, FlippingEveryHeaderByteNeverCrashes) {
  const SmallXorb x = MakeSmallXorb();
  for (size_t rec = 0; rec < 3; ++rec) {
    const size_t at = rec == 0 ? 0 : x.ends[rec - 1];
    for (size_t i = 0; i < 8; ++i) {
      for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xFF}}) {
        auto b = x.bytes;
        b[at + i] ^= flip;
        Result<VerifiedXorb> v = ParseAndVerifyXorb(b, x.hash);
        EXPECT_FALSE(v.ok()) << "record " << rec << " byte " << i;
        (void)ParseXorbRecords(b, XorbTrailingBytes::kAllow);
      }
    }
  }
}

TEST(Xorb, CorruptLz4Payloads) {
  const SmallXorb x = MakeSmallXorb();
  // Chunk 0 is LZ4: break its frame magic.
  auto b = x.bytes;
  b[8] ^= 0xFF;
  Status st = VerifyStatus(b);
  EXPECT_EQ(st.code(), Code::kCorruption);
  EXPECT_NE(st.message().find("chunk 0 at offset 0"), std::string::npos) << st.ToString();
  // Header claims one byte less than the frame decodes to.
  b = x.bytes;
  b[5] = static_cast<uint8_t>(b[5] - 1);  // 3000 -> 2999 (3000 = 0x0bb8)
  st = VerifyStatus(b);
  EXPECT_EQ(st.code(), Code::kCorruption);
  EXPECT_NE(st.message().find("does not end after the expected 2999"), std::string::npos)
      << st.ToString();
  // One byte more.
  b = x.bytes;
  b[5] = static_cast<uint8_t>(b[5] + 1);
  st = VerifyStatus(b);
  EXPECT_EQ(st.code(), Code::kCorruption);
  // Chunk 2 (BG4): corrupt the end mark of its frame so it is truncated/garbled.
  b = x.bytes;
  b[x.ends[2] - 1] ^= 0xFF;
  st = VerifyStatus(b);
  EXPECT_EQ(st.code(), Code::kCorruption);
  EXPECT_NE(st.message().find("chunk 2 at offset " + std::to_string(x.ends[1])), std::string::npos)
      << st.ToString();
  // A flipped literal byte decodes to different data: only the hash catches it.
  b = x.bytes;
  b[x.ends[0] + 8] ^= 0x01;  // a byte of the raw chunk 1
  st = ParseAndVerifyXorb(b, x.hash).status();
  EXPECT_EQ(st.code(), Code::kCorruption);
  EXPECT_NE(st.message().find("hash mismatch"), std::string::npos);
  EXPECT_TRUE(VerifyStatus(b).ok());  // without an expected hash it is a valid xorb
}

TEST(Xorb, ZeroLengthChunkRecord) {
  std::vector<uint8_t> b;
  AppendRecord(&b, 0, 0, 0, 0, {});
  Status st = VerifyStatus(b);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("uncompressed size 0"), std::string::npos);
  // LZ4 record with an empty payload.
  b.clear();
  AppendRecord(&b, 0, 0, 1, 10, {});
  EXPECT_EQ(VerifyStatus(b).code(), Code::kCorruption);
}

TEST(Xorb, TrailingBytesPolicy) {
  const SmallXorb x = MakeSmallXorb();
  for (size_t extra = 1; extra <= 12; ++extra) {
    auto b = x.bytes;
    b.insert(b.end(), extra, 'X');
    EXPECT_FALSE(ParseXorbRecords(b).ok());
    EXPECT_FALSE(ParseAndVerifyXorb(b, x.hash).ok());
    Result<XorbRecords> r = ParseXorbRecords(b, XorbTrailingBytes::kAllow);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->records.size(), 3u);
    EXPECT_EQ(r->end_offset, x.bytes.size());
    Result<VerifiedXorb> v = ParseAndVerifyXorb(b, x.hash, XorbTrailingBytes::kAllow);
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_EQ(v->end_offset, x.bytes.size());
  }
  // Trailing zero bytes look like a header with version 0 but fail its size checks.
  auto b = x.bytes;
  b.insert(b.end(), 8, 0);
  Result<XorbRecords> r = ParseXorbRecords(b, XorbTrailingBytes::kAllow);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->records.size(), 3u);
}

TEST(Xorb, ChunkCountLimit) {
  std::vector<uint8_t> b;
  const uint8_t one = 0x42;
  for (size_t i = 0; i < kXorbMaxChunks; ++i) AppendRawRecord(&b, {&one, 1});
  Result<VerifiedXorb> v = ParseAndVerifyXorb(b, std::nullopt);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->table.size(), kXorbMaxChunks);
  AppendRawRecord(&b, {&one, 1});
  for (auto trailing : {XorbTrailingBytes::kReject, XorbTrailingBytes::kAllow}) {
    Status st = ParseXorbRecords(b, trailing).status();
    EXPECT_EQ(st.code(), Code::kResourceExhausted);
    EXPECT_NE(st.message().find("chunk 8192 at offset " + std::to_string(9 * kXorbMaxChunks)),
              std::string::npos)
        << st.ToString();
    EXPECT_EQ(ParseAndVerifyXorb(b, std::nullopt, trailing).status().code(),
              Code::kResourceExhausted);
  }
}

TEST(Xorb, SizeLimit) {
  // Raw 128 KiB records: 511 fit in 64 MiB, the 512th crosses it.
  const auto chunk = testing::RandomBytes(kXorbMaxChunkSize, 5);
  std::vector<uint8_t> b;
  while (b.size() + 8 + chunk.size() <= kXorbMaxSize) AppendRawRecord(&b, chunk);
  EXPECT_TRUE(ParseXorbRecords(b).ok());
  const size_t full = b.size();
  AppendRawRecord(&b, chunk);
  Status st = ParseXorbRecords(b).status();
  EXPECT_EQ(st.code(), Code::kResourceExhausted);
  EXPECT_NE(st.message().find("64 MiB"), std::string::npos);
  st = ParseXorbRecords(b, XorbTrailingBytes::kAllow).status();
  EXPECT_EQ(st.code(), Code::kResourceExhausted);
  EXPECT_NE(st.message().find("at offset " + std::to_string(full)), std::string::npos)
      << st.ToString();
  // Oversized input with trailing bytes allowed but records within the limit: fine.
  b.resize(full);
  b.insert(b.end(), 200000, 0xEE);
  Result<XorbRecords> r = ParseXorbRecords(b, XorbTrailingBytes::kAllow);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->end_offset, full);
  EXPECT_EQ(ParseAndVerifyXorb(b, std::nullopt).status().code(), Code::kResourceExhausted);
}

TEST(XorbBuilder, RoundTripAllPolicies) {
  std::vector<std::vector<uint8_t>> chunks;
  for (size_t i = 0; i < 20; ++i) {
    const size_t n = 1 + (i * 7919) % kXorbMaxChunkSize;
    switch (i % 4) {
      case 0:
        chunks.push_back(testing::TextLikeBytes(n, i));
        break;
      case 1:
        chunks.push_back(testing::RandomBytes(n, i));
        break;
      case 2:
        chunks.push_back(std::vector<uint8_t>(n, static_cast<uint8_t>(i)));
        break;
      default: {
        std::vector<uint8_t> c(n, 0);
        for (size_t k = 0; k + 4 <= n; k += 4) c[k] = static_cast<uint8_t>(k / 4);
        chunks.push_back(c);
      }
    }
  }
  chunks.push_back(kXorbMaxChunkSize == 131072 ? testing::TextLikeBytes(131072, 99)
                                               : std::vector<uint8_t>());
  std::vector<ChunkInfo> infos;
  for (const auto& c : chunks) infos.push_back({ChunkHash(c), c.size()});
  const Hash want = XorbHash(infos);

  for (CompressionPolicy p : {CompressionPolicy::kPredict, CompressionPolicy::kBruteForce,
                              CompressionPolicy::kLz4, CompressionPolicy::kNone}) {
    XorbBuilder builder(p);
    for (const auto& c : chunks) ASSERT_TRUE(builder.Add(c).ok());
    EXPECT_EQ(builder.num_chunks(), chunks.size());
    EXPECT_EQ(builder.raw_size(), Cat(chunks).size());
    const SerializedXorb x = builder.Finish();
    EXPECT_TRUE(builder.empty());
    EXPECT_EQ(builder.serialized_size(), 0u);
    EXPECT_EQ(x.hash, want);
    EXPECT_EQ(x.table.chunks, infos);
    Result<VerifiedXorb> v = ParseAndVerifyXorb(x.bytes, want);
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_EQ(v->table, x.table);
    Result<XorbRecords> r = ParseXorbRecords(x.bytes);
    ASSERT_TRUE(r.ok());
    ChunkCodec codec;
    for (size_t i = 0; i < chunks.size(); ++i) {
      EXPECT_EQ(r->records[i].end_offset(), x.table.boundary_offsets[i]);
      if (p == CompressionPolicy::kNone) {
        EXPECT_EQ(r->records[i].scheme, CompressionScheme::kNone);
      }
      EXPECT_LE(r->records[i].compressed_size, r->records[i].uncompressed_size);
      std::vector<uint8_t> out(r->records[i].uncompressed_size);
      ASSERT_TRUE(DecompressXorbRecord(x.bytes, r->records[i], codec, out).ok());
      EXPECT_EQ(out, chunks[i]);
    }
  }
}

TEST(XorbBuilder, PrecomputedHashAndReuse) {
  XorbBuilder builder;
  const auto a = testing::TextLikeBytes(5000, 1);
  ASSERT_TRUE(builder.Add(a, ChunkHash(a)).ok());
  SerializedXorb first = builder.Finish();
  EXPECT_EQ(first.hash, ChunkHash(a));  // one chunk: the xorb hash is the chunk hash
  ASSERT_TRUE(builder.Add(a).ok());
  SerializedXorb second = builder.Finish();
  EXPECT_EQ(second.bytes, first.bytes);
  EXPECT_EQ(second.table, first.table);
}

TEST(XorbBuilder, BuildsIntoARecycledBuffer) {
  const auto a = testing::TextLikeBytes(70000, 3);
  const auto b = testing::TextLikeBytes(9000, 4);
  XorbBuilder fresh;
  ASSERT_TRUE(fresh.Add(a).ok());
  ASSERT_TRUE(fresh.Add(b).ok());
  const SerializedXorb want = fresh.Finish();

  // A buffer holding stale bytes of another xorb: they must not leak into the next one.
  std::vector<uint8_t> recycled(kXorbMaxSize, 0xAB);
  const uint8_t* storage = recycled.data();
  XorbBuilder builder;
  builder.UseBuffer(std::move(recycled));
  EXPECT_TRUE(builder.empty());
  ASSERT_TRUE(builder.Add(a).ok());
  ASSERT_TRUE(builder.Add(b).ok());
  EXPECT_EQ(builder.bytes().data(), storage);  // built in place: no new allocation
  const SerializedXorb got = builder.Finish();
  EXPECT_EQ(got.bytes, want.bytes);
  EXPECT_EQ(got.hash, want.hash);

  // A small buffer grows as needed.
  builder.UseBuffer(std::vector<uint8_t>(16, 1));
  ASSERT_TRUE(builder.Add(a).ok());
  ASSERT_TRUE(builder.Add(b).ok());
  EXPECT_EQ(builder.Finish().bytes, want.bytes);
}

TEST(XorbBuilder, RejectsBadChunksAndRespectsLimits) {
  XorbBuilder builder;
  EXPECT_EQ(builder.Add({}).code(), Code::kInvalidArgument);
  std::vector<uint8_t> big(kXorbMaxChunkSize + 1, 1);
  EXPECT_EQ(builder.Add(big).code(), Code::kInvalidArgument);
  EXPECT_FALSE(builder.CanAdd(0));
  EXPECT_FALSE(builder.CanAdd(kXorbMaxChunkSize + 1));
  EXPECT_TRUE(builder.empty());

  const uint8_t one = 7;
  for (size_t i = 0; i < kXorbMaxChunks; ++i) ASSERT_TRUE(builder.Add({&one, 1}).ok()) << i;
  EXPECT_FALSE(builder.CanAdd(1));
  const size_t size_before = builder.serialized_size();
  EXPECT_EQ(builder.Add({&one, 1}).code(), Code::kResourceExhausted);
  EXPECT_EQ(builder.serialized_size(), size_before);
  EXPECT_EQ(builder.num_chunks(), kXorbMaxChunks);
  const SerializedXorb x = builder.Finish();
  EXPECT_TRUE(ParseAndVerifyXorb(x.bytes, x.hash).ok());

  // Byte limit: incompressible 128 KiB chunks.
  const auto chunk = testing::RandomBytes(kXorbMaxChunkSize, 3);
  size_t added = 0;
  while (builder.CanAdd(chunk.size())) {
    ASSERT_TRUE(builder.Add(chunk).ok());
    ++added;
  }
  EXPECT_EQ(added, kXorbMaxSize / (kXorbChunkHeaderSize + kXorbMaxChunkSize));
  EXPECT_EQ(builder.Add(chunk).code(), Code::kResourceExhausted);
  EXPECT_LE(builder.serialized_size(), kXorbMaxSize);
  // A smaller chunk may still fit.
  const size_t room = kXorbMaxSize - builder.serialized_size() - kXorbChunkHeaderSize;
  ASSERT_GT(room, 0u);
  EXPECT_TRUE(builder.CanAdd(room));
  EXPECT_FALSE(builder.CanAdd(room + 1));
  EXPECT_TRUE(builder.Add(testing::RandomBytes(room, 4)).ok());
  EXPECT_EQ(builder.serialized_size(), kXorbMaxSize);
  const SerializedXorb full = builder.Finish();
  EXPECT_TRUE(ParseAndVerifyXorb(full.bytes, full.hash).ok());
}

TEST(Xorb, ExtractAndDecompressErrors) {
  const SmallXorb x = MakeSmallXorb();
  ChunkCodec codec;
  std::vector<uint8_t> out = {1, 2, 3};
  // Truncated record: nothing appended.
  Result<size_t> r = ExtractXorbChunk(std::span<const uint8_t>(x.bytes).first(20), codec, &out);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(out.size(), 3u);
  auto b = x.bytes;
  b[8] ^= 0xFF;  // bad frame magic
  r = ExtractXorbChunk(b, codec, &out);
  EXPECT_EQ(r.status().code(), Code::kCorruption);
  EXPECT_EQ(out.size(), 3u);

  XorbChunkRecord rec;
  rec.offset = x.bytes.size() - 4;
  rec.compressed_size = 100;
  rec.uncompressed_size = 100;
  std::vector<uint8_t> dst(100);
  EXPECT_EQ(DecompressXorbRecord(x.bytes, rec, codec, dst).code(), Code::kInvalidArgument);
  rec.offset = x.bytes.size() + 100;
  EXPECT_EQ(DecompressXorbRecord(x.bytes, rec, codec, dst).code(), Code::kInvalidArgument);
  Result<XorbRecords> parsed = ParseXorbRecords(x.bytes);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(DecompressXorbRecord(x.bytes, parsed->records[0], codec, dst).code(),
            Code::kInvalidArgument);
}

}  // namespace
}  // namespace xet
