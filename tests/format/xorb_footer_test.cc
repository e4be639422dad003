// The stored-xorb footer (xet-core XorbObjectInfo v1): exact byte layout, round trips, and
// rejection of malformed footers.
#include "format/xorb_footer.h"

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

uint32_t U32At(const std::vector<uint8_t>& b, size_t at) {
  return uint32_t{b[at]} | uint32_t{b[at + 1]} << 8 | uint32_t{b[at + 2]} << 16 |
         uint32_t{b[at + 3]} << 24;
}
void PutU32At(std::vector<uint8_t>* b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    (*b)[at + static_cast<size_t>(i)] = static_cast<uint8_t>(v >> (8 * i));
}
std::string StrAt(const std::vector<uint8_t>& b, size_t at, size_t n) {
  return std::string(b.begin() + static_cast<long>(at), b.begin() + static_cast<long>(at + n));
}
Hash Filled(uint8_t v) {
  std::array<uint8_t, 32> raw;
  for (size_t i = 0; i < 32; ++i) raw[i] = static_cast<uint8_t>(v + i);
  return Hash::FromArray(raw);
}

// A stored 2-chunk xorb of raw records, with its footer.
struct Stored {
  std::vector<uint8_t> chunk_bytes;
  XorbFooter footer;
  std::vector<uint8_t> object;
};

Stored MakeStored(size_t num_chunks, std::array<uint8_t, 4> nonce = {0xA1, 0xB2, 0xC3, 0xD4}) {
  XorbBuilder builder(CompressionPolicy::kPredict);
  for (size_t i = 0; i < num_chunks; ++i) {
    EXPECT_TRUE(builder.Add(testing::TextLikeBytes(1000 + 500 * i, i)).ok());
  }
  SerializedXorb x = builder.Finish();
  Stored s;
  s.chunk_bytes = x.bytes;
  s.footer = MakeXorbFooter(x.hash, x.table, nonce);
  s.object = x.bytes;
  EXPECT_TRUE(AppendXorbFooter(s.footer, &s.object).ok());
  return s;
}

TEST(XorbFooter, ByteLayoutOfATwoChunkFooter) {
  XorbFooter f;
  f.xorb_hash = Filled(0x10);
  f.chunk_hashes = {Filled(0x40), Filled(0x80)};
  f.boundary_offsets = {100, 250};
  f.unpacked_offsets = {1000, 3000};
  f.nonce = {1, 2, 3, 4};
  std::vector<uint8_t> out = {0xEE};  // appending keeps what is there
  ASSERT_TRUE(AppendXorbFooter(f, &out).ok());
  ASSERT_EQ(out.size(), 1u + 172 + 4);
  EXPECT_EQ(out[0], 0xEE);
  const std::vector<uint8_t> b(out.begin() + 1, out.end());
  // Offsets computed by hand for n = 2 (see the layout table in xorb_footer.h).
  EXPECT_EQ(StrAt(b, 0, 7), "XETBLOB");
  EXPECT_EQ(b[7], 1);
  EXPECT_EQ(std::memcmp(b.data() + 8, Filled(0x10).data(), 32), 0);
  EXPECT_EQ(StrAt(b, 40, 7), "XBLBHSH");
  EXPECT_EQ(b[47], 0);
  EXPECT_EQ(U32At(b, 48), 2u);
  EXPECT_EQ(std::memcmp(b.data() + 52, Filled(0x40).data(), 32), 0);
  EXPECT_EQ(std::memcmp(b.data() + 84, Filled(0x80).data(), 32), 0);
  EXPECT_EQ(StrAt(b, 116, 7), "XBLBBND");
  EXPECT_EQ(b[123], 1);
  EXPECT_EQ(U32At(b, 124), 2u);
  EXPECT_EQ(U32At(b, 128), 100u);
  EXPECT_EQ(U32At(b, 132), 250u);
  EXPECT_EQ(U32At(b, 136), 1000u);
  EXPECT_EQ(U32At(b, 140), 3000u);
  EXPECT_EQ(U32At(b, 144), 2u);
  EXPECT_EQ(U32At(b, 148), 172u - 40u);   // hashes section starts at 40
  EXPECT_EQ(U32At(b, 152), 172u - 116u);  // boundaries section starts at 116
  EXPECT_EQ(b[156], 1);
  EXPECT_EQ(b[157], 2);
  EXPECT_EQ(b[158], 3);
  EXPECT_EQ(b[159], 4);
  for (size_t i = 160; i < 172; ++i) EXPECT_EQ(b[i], 0) << i;
  EXPECT_EQ(U32At(b, 172), 172u);
  EXPECT_EQ(XorbFooterInfoLength(2), 172u);
}

TEST(XorbFooter, EmptyFooterIs92Bytes) {
  XorbFooter f;
  std::vector<uint8_t> out;
  ASSERT_TRUE(AppendXorbFooter(f, &out).ok());
  ASSERT_EQ(out.size(), 96u);
  EXPECT_EQ(U32At(out, 92), 92u);
  EXPECT_EQ(U32At(out, 64), 0u);
  EXPECT_EQ(U32At(out, 68), 92u - 40u);
  EXPECT_EQ(U32At(out, 72), 92u - 52u);
  Result<XorbFooter> parsed = ParseXorbFooter(out);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, f);
}

TEST(XorbFooter, RoundTripWithBuilderAndSplit) {
  for (size_t n : {size_t{1}, size_t{2}, size_t{7}}) {
    const Stored s = MakeStored(n);
    EXPECT_EQ(s.object.size(), s.chunk_bytes.size() + XorbFooterInfoLength(n) + 4);
    Result<XorbFooter> parsed = ParseXorbFooter(s.object);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(*parsed, s.footer);
    EXPECT_TRUE(CheckXorbFooterHash(*parsed).ok());
    Result<StoredXorbParts> parts = SplitStoredXorb(s.object);
    ASSERT_TRUE(parts.ok());
    EXPECT_EQ(std::vector<uint8_t>(parts->chunk_bytes.begin(), parts->chunk_bytes.end()),
              s.chunk_bytes);
    Result<VerifiedXorb> v = ParseAndVerifyXorb(parts->chunk_bytes, parts->footer.xorb_hash);
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_EQ(MakeXorbFooter(v->hash, v->table, s.footer.nonce), s.footer);
    // A lenient parse of the whole object stops where the footer starts.
    Result<VerifiedXorb> whole =
        ParseAndVerifyXorb(s.object, s.footer.xorb_hash, XorbTrailingBytes::kAllow);
    ASSERT_TRUE(whole.ok()) << whole.status().ToString();
    EXPECT_EQ(whole->end_offset, s.chunk_bytes.size());
  }
}

TEST(XorbFooter, NonceDoesNotChangeTheHash) {
  const Stored a = MakeStored(3, {0, 0, 0, 0});
  const Stored b = MakeStored(3, {9, 9, 9, 9});
  EXPECT_NE(a.object, b.object);
  EXPECT_EQ(a.footer.xorb_hash, b.footer.xorb_hash);
  Result<XorbFooter> pb = ParseXorbFooter(b.object);
  ASSERT_TRUE(pb.ok());
  EXPECT_EQ(pb->nonce, (std::array<uint8_t, 4>{9, 9, 9, 9}));
  // Reserved buffer bytes are ignored by the reader.
  auto c = b.object;
  c[c.size() - 4 - 1] = 0x77;
  EXPECT_TRUE(ParseXorbFooter(c).ok());
}

TEST(XorbFooter, AppendRejectsInconsistentVectors) {
  XorbFooter f;
  f.chunk_hashes = {Hash()};
  std::vector<uint8_t> out = {1};
  EXPECT_EQ(AppendXorbFooter(f, &out).code(), Code::kInvalidArgument);
  EXPECT_EQ(out.size(), 1u);
}

class XorbFooterErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    s_ = MakeStored(2);
    start_ = s_.chunk_bytes.size();
  }
  // Byte offset of footer field `at` (relative to the footer start) in the object.
  size_t At(size_t at) const { return start_ + at; }
  void ExpectError(const std::vector<uint8_t>& object, const std::string& needle,
                   Code code = Code::kInvalidArgument) {
    Result<XorbFooter> r = ParseXorbFooter(object);
    ASSERT_FALSE(r.ok()) << needle;
    EXPECT_EQ(r.status().code(), code) << r.status().ToString();
    EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().ToString();
    EXPECT_FALSE(SplitStoredXorb(object).ok());
  }
  Stored s_;
  size_t start_ = 0;
};

TEST_F(XorbFooterErrors, TooShortOrBadLength) {
  ExpectError({}, "too short");
  ExpectError({1, 0, 0}, "too short");
  auto b = s_.object;
  PutU32At(&b, b.size() - 4, static_cast<uint32_t>(b.size()));  // longer than the object
  ExpectError(b, "exceeds");
  PutU32At(&b, b.size() - 4, 0xFFFFFFFFu);
  ExpectError(b, "exceeds");
  b = s_.object;
  PutU32At(&b, b.size() - 4, 171);  // not 92 + 40 n
  ExpectError(b, "not 92 + 40");
  PutU32At(&b, b.size() - 4, 91);
  ExpectError(b, "not 92 + 40");
}

TEST_F(XorbFooterErrors, EveryTruncation) {
  for (size_t len = 0; len < s_.object.size(); ++len) {
    std::vector<uint8_t> cut(s_.object.begin(), s_.object.begin() + static_cast<long>(len));
    EXPECT_FALSE(ParseXorbFooter(cut).ok()) << len;
  }
  // Chunk bytes missing in front (footer intact): the last boundary no longer matches.
  std::vector<uint8_t> tail(s_.object.begin() + 1, s_.object.end());
  ExpectError(tail, "is not the footer's start");
}

TEST_F(XorbFooterErrors, BadIdentsAndVersions) {
  auto b = s_.object;
  b[At(0)] = 'Y';
  ExpectError(b, "bad ident");
  b = s_.object;
  b[At(7)] = 0;
  ExpectError(b, "unsupported version 0");
  b[At(7)] = 2;
  ExpectError(b, "unsupported version 2");
  b = s_.object;
  b[At(46)] ^= 1;
  ExpectError(b, "bad hashes section ident");
  b = s_.object;
  b[At(47)] = 1;
  ExpectError(b, "hashes section version 1");
  b = s_.object;
  b[At(116)] ^= 1;
  ExpectError(b, "bad boundaries section ident");
  b = s_.object;
  b[At(123)] = 0;
  ExpectError(b, "boundaries section version 0");
}

TEST_F(XorbFooterErrors, InconsistentCounts) {
  auto b = s_.object;
  PutU32At(&b, At(48), 3);
  ExpectError(b, "hashes section num_chunks 3");
  b = s_.object;
  PutU32At(&b, At(124), 1);
  ExpectError(b, "boundaries section num_chunks 1");
  b = s_.object;
  PutU32At(&b, At(144), 0);
  ExpectError(b, "num_chunks 0 disagrees");
  // Huge counts everywhere: rejected without allocating for them.
  b = s_.object;
  for (size_t at : {size_t{48}, size_t{124}, size_t{144}}) PutU32At(&b, At(at), 0xFFFFFFFFu);
  ExpectError(b, "4294967295");
}

TEST_F(XorbFooterErrors, HugeClaimedChunkCount) {
  // A footer claiming 2^26 chunks inside a small object: the info length cannot fit, so
  // nothing is allocated for the claim.
  std::vector<uint8_t> b = {'X', 'E', 'T', 'B', 'L', 'O', 'B', 1};
  b.resize(200, 0);
  const uint32_t huge = 92 + 40u * (1u << 26);
  b.push_back(static_cast<uint8_t>(huge));
  b.push_back(static_cast<uint8_t>(huge >> 8));
  b.push_back(static_cast<uint8_t>(huge >> 16));
  b.push_back(static_cast<uint8_t>(huge >> 24));
  ExpectError(b, "exceeds");
  // A well-formed footer for 8193 chunks is rejected by the limit before any parsing.
  XorbFooter f;
  f.chunk_hashes.resize(kXorbMaxChunks + 1);
  f.boundary_offsets.resize(kXorbMaxChunks + 1);
  f.unpacked_offsets.resize(kXorbMaxChunks + 1);
  std::vector<uint8_t> out;
  EXPECT_EQ(AppendXorbFooter(f, &out).code(), Code::kInvalidArgument);
  out.assign(XorbFooterInfoLength(kXorbMaxChunks + 1), 0);
  const uint32_t len = static_cast<uint32_t>(out.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(len >> (8 * i)));
  ExpectError(out, "8192-chunk limit", Code::kResourceExhausted);
}

TEST_F(XorbFooterErrors, WrongOffsetsFromEnd) {
  auto b = s_.object;
  PutU32At(&b, At(148), U32At(b, At(148)) + 1);
  ExpectError(b, "hashes_section_offset_from_end");
  b = s_.object;
  PutU32At(&b, At(152), U32At(b, At(152)) - 4);
  ExpectError(b, "boundary_section_offset_from_end");
}

TEST_F(XorbFooterErrors, BadBoundaries) {
  auto b = s_.object;
  PutU32At(&b, At(128), U32At(b, At(132)));  // chunk 0 ends where chunk 1 does
  ExpectError(b, "chunk 1 boundary offset");
  b = s_.object;
  PutU32At(&b, At(128), 8);  // a record of 8 bytes cannot hold a chunk
  ExpectError(b, "chunk 0 boundary offset 8");
  b = s_.object;
  PutU32At(&b, At(132), U32At(b, At(132)) - 1);  // last boundary != footer start
  ExpectError(b, "is not the footer's start");
  b = s_.object;
  PutU32At(&b, At(136), 0);  // unpacked size 0
  ExpectError(b, "chunk 0 unpacked offset 0");
  b = s_.object;
  PutU32At(&b, At(140), U32At(b, At(136)) + 131073);  // chunk larger than 128 KiB
  ExpectError(b, "chunk 1 unpacked offset");
  b = s_.object;
  PutU32At(&b, At(140), U32At(b, At(136)));  // not increasing
  ExpectError(b, "chunk 1 unpacked offset");
}

TEST_F(XorbFooterErrors, HashCheck) {
  XorbFooter f = s_.footer;
  EXPECT_TRUE(CheckXorbFooterHash(f).ok());
  f.chunk_hashes[1] = Hash();
  EXPECT_EQ(CheckXorbFooterHash(f).code(), Code::kCorruption);
  f = s_.footer;
  f.unpacked_offsets[1] += 1;
  EXPECT_EQ(CheckXorbFooterHash(f).code(), Code::kCorruption);
}

}  // namespace
}  // namespace xet
