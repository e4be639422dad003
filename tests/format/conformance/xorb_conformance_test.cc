// Conformance: the reference xorb prefix (first 10 chunk records of the ev-population xorb)
// against extra.json's record table, the reference .chunks file, and the stated hashes.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "format/keyed_hash.h"
#include "format/merkle.h"
#include "format/xorb.h"
#include "support/test_support.h"

namespace xet {
namespace {

using testing::HashFromHex;
using testing::LoadConformanceFile;
using testing::LoadConformanceJson;

constexpr char kPrefix[] = "reference/ev-population.xorb.first-10-chunks";

std::string HexOf(std::span<const uint8_t> bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15]);
  }
  return s;
}

// The first n lines of the reference .chunks file: (hash, length).
std::vector<ChunkInfo> ReferenceChunks(size_t n) {
  const auto bytes = LoadConformanceFile("reference/ev-population.csv.chunks");
  std::istringstream in(std::string(bytes.begin(), bytes.end()));
  std::vector<ChunkInfo> out;
  std::string hex;
  uint64_t size = 0;
  while (out.size() < n && in >> hex >> size) out.push_back({HashFromHex(hex), size});
  return out;
}

TEST(XorbConformance, RecordHeadersMatchExtraJson) {
  const auto xorb = LoadConformanceFile(kPrefix);
  const auto ev = LoadConformanceJson("extra.json")["ev_population"];
  const auto& want = ev["xorb_prefix_records"];
  Result<XorbRecords> parsed = ParseXorbRecords(xorb);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->records.size(), want.size());
  ASSERT_EQ(parsed->records.size(), 10u);
  for (size_t i = 0; i < want.size(); ++i) {
    const XorbChunkRecord& r = parsed->records[i];
    const auto& w = want[i];
    ASSERT_EQ(w["index"].get<size_t>(), i);
    EXPECT_EQ(r.offset, w["offset"].get<size_t>()) << i;
    EXPECT_EQ(HexOf(std::span<const uint8_t>(xorb).subspan(r.offset, 8)),
              w["header_hex"].get<std::string>())
        << i;
    const XorbChunkHeader h =
        DecodeXorbChunkHeader(std::span<const uint8_t>(xorb).subspan(r.offset));
    EXPECT_EQ(h.version, w["version"].get<int>()) << i;
    EXPECT_EQ(r.compressed_size, w["compressed_size"].get<uint32_t>()) << i;
    EXPECT_EQ(static_cast<int>(r.scheme), w["scheme"].get<int>()) << i;
    EXPECT_EQ(r.uncompressed_size, w["uncompressed_size"].get<uint32_t>()) << i;
    EXPECT_EQ(HexOf(std::span<const uint8_t>(xorb).subspan(r.payload_offset(), 4)),
              w["payload_first4_hex"].get<std::string>())
        << i;
    EXPECT_EQ(r.end_offset(), w["record_end"].get<size_t>()) << i;
    // Re-encoding the header gives the same bytes.
    uint8_t again[8];
    EncodeXorbChunkHeader(h, again);
    EXPECT_EQ(HexOf(again), w["header_hex"].get<std::string>()) << i;
  }
  EXPECT_EQ(xorb.size() - parsed->end_offset, ev["xorb_prefix_trailing_bytes"].get<size_t>());
}

TEST(XorbConformance, ChunkHashesAndXorbHash) {
  const auto xorb = LoadConformanceFile(kPrefix);
  const auto ev = LoadConformanceJson("extra.json")["ev_population"];
  const auto reference = ReferenceChunks(10);
  ASSERT_EQ(reference.size(), 10u);
  const Hash expected = HashFromHex(ev["xorb_hash_first_10_chunks"]);

  Result<VerifiedXorb> v = ParseAndVerifyXorb(xorb, expected);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->hash, expected);
  ASSERT_EQ(v->table.chunks, reference);
  EXPECT_EQ(XorbHash(reference), expected);

  // The table: record ends and cumulative uncompressed ends.
  const auto& records = ev["xorb_prefix_records"];
  uint64_t unpacked = 0;
  for (size_t i = 0; i < 10; ++i) {
    unpacked += reference[i].size;
    EXPECT_EQ(v->table.boundary_offsets[i], records[i]["record_end"].get<uint32_t>());
    EXPECT_EQ(v->table.unpacked_offsets[i], unpacked);
  }
  EXPECT_EQ(v->end_offset, xorb.size());

  // Verification hashes over chunk ranges [0,10) and [0,2).
  std::vector<Hash> hashes;
  for (const ChunkInfo& c : v->table.chunks) hashes.push_back(c.hash);
  EXPECT_EQ(VerificationHash(hashes).ToHex(), ev["verification_hash_0_10"].get<std::string>());
  EXPECT_EQ(VerificationHash(std::span<const Hash>(hashes).first(2)).ToHex(),
            ev["verification_hash_0_2"].get<std::string>());
}

TEST(XorbConformance, ReferenceXorbWithTrailingBytes) {
  // The full reference xorb ends with 4 bytes "XETB" after its last record.
  auto xorb = LoadConformanceFile(kPrefix);
  const size_t records_end = xorb.size();
  xorb.insert(xorb.end(), {'X', 'E', 'T', 'B'});
  EXPECT_FALSE(ParseXorbRecords(xorb).ok());
  Result<XorbRecords> parsed = ParseXorbRecords(xorb, XorbTrailingBytes::kAllow);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->records.size(), 10u);
  EXPECT_EQ(parsed->end_offset, records_end);
  const auto ev = LoadConformanceJson("extra.json")["ev_population"];
  Result<VerifiedXorb> v = ParseAndVerifyXorb(xorb, HashFromHex(ev["xorb_hash_first_10_chunks"]),
                                              XorbTrailingBytes::kAllow);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->end_offset, records_end);
}

TEST(XorbConformance, ExtractEachChunk) {
  const auto xorb = LoadConformanceFile(kPrefix);
  const auto reference = ReferenceChunks(10);
  ChunkCodec codec;
  size_t offset = 0;
  for (size_t i = 0; i < 10; ++i) {
    std::vector<uint8_t> chunk;
    Result<size_t> used =
        ExtractXorbChunk(std::span<const uint8_t>(xorb).subspan(offset), codec, &chunk);
    ASSERT_TRUE(used.ok()) << used.status().ToString();
    EXPECT_EQ(chunk.size(), reference[i].size);
    EXPECT_EQ(ChunkHash(chunk), reference[i].hash) << i;
    offset += *used;
  }
  EXPECT_EQ(offset, xorb.size());
}

}  // namespace
}  // namespace xet
