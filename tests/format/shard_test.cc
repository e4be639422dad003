// Unit tests of the shard parser, writer, dedup builder and content validation: round trips
// of synthetic shards and every rejection path of the parser.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "format/byte_io.h"
#include "format/merkle.h"
#include "format/sha256.h"
#include "format/shard_parser.h"
#include "format/shard_types.h"
#include "format/shard_validation.h"
#include "format/shard_writer.h"

namespace xet {
namespace {

Hash TestHash(uint64_t seed) {
  Hash h;
  for (size_t i = 0; i < Hash::kSize; ++i) {
    h.mutable_data()[i] = static_cast<uint8_t>((seed * 131 + i * 17 + 1) & 0xFF);
  }
  return h;
}

Hash AllOnes() {
  Hash h;
  std::memset(h.mutable_data(), 0xFF, Hash::kSize);
  return h;
}

CasInfo MakeCas(uint64_t seed, size_t n_entries) {
  CasInfo c;
  c.cas_hash = TestHash(seed);
  uint32_t offset = 0;
  for (size_t i = 0; i < n_entries; ++i) {
    CasChunkEntry e;
    e.chunk_hash = TestHash(seed * 1000 + i + 1);
    e.chunk_byte_range_start = offset;
    e.unpacked_segment_bytes = static_cast<uint32_t>(1000 + i);
    offset += e.unpacked_segment_bytes;
    c.entries.push_back(e);
  }
  c.num_bytes_in_cas = offset;
  return c;
}

FileInfo MakeFile(uint64_t seed, size_t n_terms, bool verification, bool ext) {
  FileInfo f;
  f.file_hash = n_terms == 0 ? Hash() : TestHash(seed);
  for (size_t i = 0; i < n_terms; ++i) {
    FileDataSequenceEntry t;
    t.cas_hash = TestHash(seed + 100 + i);
    t.unpacked_segment_bytes = static_cast<uint32_t>(5000 + i);
    t.chunk_index_start = static_cast<uint32_t>(i);
    t.chunk_index_end = static_cast<uint32_t>(i + 3);
    f.terms.push_back(t);
    if (verification) f.verification.push_back({TestHash(seed + 200 + i), {}});
  }
  if (verification) f.flags |= kFileFlagWithVerification;
  if (ext) {
    f.flags |= kFileFlagWithMetadataExt;
    f.metadata_ext = FileMetadataExt{TestHash(seed + 300), {}};
  }
  return f;
}

// A small valid shard: two files with verification and one metadata ext, two CAS blocks.
Shard SmallShard(bool with_footer) {
  Shard s;
  s.files.push_back(MakeFile(1, 2, true, true));
  s.files.push_back(MakeFile(2, 1, true, false));
  s.cas_infos.push_back(MakeCas(3, 2));
  s.cas_infos.push_back(MakeCas(4, 1));
  if (with_footer) {
    ShardFooter f;
    f.shard_creation_timestamp = 1700000000;
    f.shard_key_expiry = 1800000000;
    s.footer = f;
  }
  return s;
}

std::vector<uint8_t> Serialize(const Shard& s) {
  auto r = SerializeShard(s);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::vector<uint8_t>{};
}

// Serializes, parses, and checks the parse equals the input (with the writer's defaults
// made explicit) and re-serializes to the same bytes.
void ExpectRoundTrip(const Shard& s) {
  const auto bytes = Serialize(s);
  ASSERT_EQ(bytes.size(), ComputeShardLayout(s).total_size);
  auto parsed = ParseShard(bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  Shard expected = s;
  if (expected.footer) {
    const ShardLayout l = ComputeShardLayout(s);
    expected.footer->file_info_offset = l.file_info_offset;
    expected.footer->cas_info_offset = l.cas_info_offset;
    expected.footer->footer_offset = l.footer_offset;
    if (!expected.footer->lookup) {
      expected.footer->lookup =
          ShardLookupFields{l.cas_info_end, 0, l.cas_info_end, 0, l.cas_info_end, 0};
    }
    if (!expected.footer->stats) expected.footer->stats = ComputeShardStats(s);
  }
  EXPECT_EQ(*parsed, expected);
  EXPECT_EQ(Serialize(*parsed), bytes);
}

// Expects ParseShard to fail with InvalidArgument and a message containing `needle`.
void ExpectParseError(const std::vector<uint8_t>& bytes, const std::string& needle) {
  auto r = ParseShard(bytes);
  ASSERT_FALSE(r.ok()) << "parse unexpectedly succeeded; wanted: " << needle;
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find(needle), std::string::npos)
      << "message: " << r.status().message() << "\nwanted: " << needle;
}

void PutU64(std::vector<uint8_t>& b, size_t at, uint64_t v) { std::memcpy(&b[at], &v, 8); }

// Hand-assembled shard bytes, for inputs the writer refuses to produce.
class RawShard {
 public:
  explicit RawShard(uint64_t footer_size = 0) {
    w_.Bytes(kShardHeaderTag.data(), kShardHeaderTag.size());
    w_.U64(kShardHeaderVersion);
    w_.U64(footer_size);
  }
  RawShard& FileHeader(const Hash& h, uint32_t flags, uint32_t n, uint64_t reserved = 0) {
    w_.PutHash(h);
    w_.U32(flags);
    w_.U32(n);
    w_.U64(reserved);
    return *this;
  }
  // Any 48-byte record with the given hash (a term, verification entry, CAS entry, ...).
  RawShard& Record(const Hash& h, uint32_t a = 0, uint32_t b = 0, uint32_t c = 0, uint32_t d = 0) {
    w_.PutHash(h);
    w_.U32(a);
    w_.U32(b);
    w_.U32(c);
    w_.U32(d);
    return *this;
  }
  RawShard& CasHeader(const Hash& h, uint32_t n, uint32_t bytes_in_cas = 0) {
    return Record(h, 0, n, bytes_in_cas, 0);
  }
  RawShard& Bookend() { return Record(AllOnes()); }
  std::vector<uint8_t> bytes() const { return out_; }

 private:
  std::vector<uint8_t> out_;
  ByteWriter w_{&out_};
};

// ---- Round trips ----------------------------------------------------------------------

TEST(ShardRoundTrip, EmptyShard) {
  Shard s;
  ExpectRoundTrip(s);
  EXPECT_EQ(Serialize(s).size(), 48u + 96u);
  s.footer = ShardFooter{};
  ExpectRoundTrip(s);
  EXPECT_EQ(Serialize(s).size(), 48u + 96u + 200u);
}

TEST(ShardRoundTrip, SyntheticVariants) {
  for (bool footer : {false, true}) {
    for (bool verification : {false, true}) {
      for (bool ext : {false, true}) {
        SCOPED_TRACE(testing::Message()
                     << "footer=" << footer << " verification=" << verification << " ext=" << ext);
        Shard s;
        s.files.push_back(MakeFile(10, 3, verification, ext));
        s.files.push_back(MakeFile(20, 1, verification, !ext));
        s.files.push_back(MakeFile(30, 0, verification, ext));  // an empty file
        s.cas_infos.push_back(MakeCas(40, 3));
        s.cas_infos.push_back(MakeCas(50, 1));
        s.cas_infos.push_back(MakeCas(60, 5));
        if (footer) s.footer = ShardFooter{};
        ExpectRoundTrip(s);
        EXPECT_TRUE(ValidateShardContents(s).ok());
      }
    }
  }
}

TEST(ShardRoundTrip, ZeroFilesAndZeroCasBlocks) {
  Shard files_only;
  files_only.files.push_back(MakeFile(1, 2, true, true));
  ExpectRoundTrip(files_only);
  Shard cas_only;
  cas_only.cas_infos.push_back(MakeCas(2, 4));
  ExpectRoundTrip(cas_only);
  cas_only.footer = ShardFooter{};
  ExpectRoundTrip(cas_only);
}

TEST(ShardRoundTrip, ReservedFieldsArePreserved) {
  Shard s = SmallShard(true);
  s.files[0].reserved = 126846135456846514u;  // what xet-core's test builds write here
  s.files[0].verification[1].reserved[3] = 7;
  s.files[0].metadata_ext->reserved[15] = 9;
  s.files[0].terms[0].cas_flags = 5;
  s.cas_infos[0].cas_flags = 3;
  s.cas_infos[0].num_bytes_on_disk = 12345;
  s.cas_infos[0].entries[0].flags = kCasEntryFlagGlobalDedup;
  s.cas_infos[0].entries[1].reserved = 0xdeadbeef;
  s.footer->chunk_hash_hmac_key = TestHash(99);
  s.footer->buffer = {1, 2, 3, 4, 5, 6};
  s.footer->lookup = ShardLookupFields{0, 1, 2, 3, 4, 5};  // nonsense, kept as stored
  s.footer->stats = ShardStats{7, 8, 9};
  ExpectRoundTrip(s);
}

TEST(ShardRoundTrip, WriterDefaultsForFooter) {
  const Shard s = SmallShard(true);
  auto parsed = ParseShard(Serialize(s));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const ShardLayout l = ComputeShardLayout(s);
  const ShardFooter& f = *parsed->footer;
  EXPECT_EQ(f.file_info_offset, 48u);
  EXPECT_EQ(f.cas_info_offset, l.cas_info_offset);
  EXPECT_EQ(f.footer_offset, l.footer_offset);
  EXPECT_EQ(*f.lookup,
            (ShardLookupFields{l.footer_offset, 0, l.footer_offset, 0, l.footer_offset, 0}));
  EXPECT_EQ(f.stats->materialized_bytes, s.files[0].size() + s.files[1].size());
  EXPECT_EQ(f.stats->stored_bytes,
            uint64_t{s.cas_infos[0].num_bytes_in_cas} + s.cas_infos[1].num_bytes_in_cas);
  EXPECT_EQ(f.stats->stored_bytes_on_disk, 0u);
  // Offsets stored in the struct are ignored: the writer recomputes them.
  Shard wrong = s;
  wrong.footer->file_info_offset = 7;
  wrong.footer->cas_info_offset = 8;
  wrong.footer->footer_offset = 9;
  EXPECT_EQ(Serialize(wrong), Serialize(s));
}

TEST(ShardRoundTrip, LookupTablesAreKeptAsBytes) {
  Shard s = SmallShard(true);
  const ShardLayout base = ComputeShardLayout(s);
  const uint64_t start = base.cas_info_end;
  // 2 file records, 2 xorb records, 3 chunk records.
  s.footer->lookup_tables.assign(2 * 12 + 2 * 12 + 3 * 16, 0);
  for (size_t i = 0; i < s.footer->lookup_tables.size(); ++i) {
    s.footer->lookup_tables[i] = static_cast<uint8_t>(i * 7);
  }
  s.footer->lookup = ShardLookupFields{start, 2, start + 24, 2, start + 48, 3};
  ExpectRoundTrip(s);
  EXPECT_EQ(ComputeShardLayout(s).footer_offset, start + 96);

  // Counts that do not describe the bytes are rejected by the writer and the parser.
  Shard bad = s;
  bad.footer->lookup->chunk_lookup_num_entry = 2;
  EXPECT_FALSE(SerializeShard(bad).ok());
  auto bytes = Serialize(s);
  PutU64(bytes, bytes.size() - 200 + 64, 2);  // chunk_lookup_num_entry
  ExpectParseError(bytes, "lookup");
  bytes = Serialize(s);
  PutU64(bytes, bytes.size() - 200 + 24, start + 1);  // file_lookup_offset
  ExpectParseError(bytes, "file_lookup_offset");
  bytes = Serialize(s);
  PutU64(bytes, bytes.size() - 200 + 32, std::numeric_limits<uint64_t>::max());
  ExpectParseError(bytes, "does not fit");
}

TEST(ShardRoundTrip, UploadFormDropsFooter) {
  const Shard s = SmallShard(true);
  auto upload = SerializeShardForUpload(s);
  ASSERT_TRUE(upload.ok());
  auto parsed = ParseShard(*upload);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_FALSE(parsed->footer.has_value());
  EXPECT_EQ(parsed->files, s.files);
  EXPECT_EQ(parsed->cas_infos, s.cas_infos);
  auto header = ParseShardHeader(*upload);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->footer_size, 0u);
  EXPECT_TRUE(ValidateUploadShard(*parsed).ok());
}

// ---- Parser rejections ----------------------------------------------------------------

TEST(ShardParser, EveryTruncationFails) {
  for (bool footer : {false, true}) {
    const auto bytes = Serialize(SmallShard(footer));
    ASSERT_TRUE(ParseShard(bytes).ok());
    for (size_t n = 0; n < bytes.size(); ++n) {
      auto r = ParseShard(std::span(bytes).first(n));
      EXPECT_FALSE(r.ok()) << "footer=" << footer << " prefix of " << n << " bytes parsed";
      if (!r.ok()) {
        EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
      }
    }
  }
}

TEST(ShardParser, ShortInputMessages) {
  ExpectParseError({}, "a shard header needs 48 bytes, got 0");
  auto bytes = Serialize(SmallShard(false));
  bytes.resize(48 + 48 + 10);
  ExpectParseError(bytes,
                   "at offset 84: file with num_entries 2 needs 5 records of 48 bytes, "
                   "but only 10 bytes remain");
}

TEST(ShardParser, BadTag) {
  for (size_t pos : {0u, 13u, 14u, 31u}) {
    auto bytes = Serialize(SmallShard(true));
    bytes[pos] ^= 1;
    ExpectParseError(bytes, "wrong header tag");
  }
}

TEST(ShardParser, BadHeaderVersion) {
  for (uint64_t v : {0ull, 1ull, 3ull, ~0ull}) {
    auto bytes = Serialize(SmallShard(false));
    PutU64(bytes, 32, v);
    ExpectParseError(bytes, "at offset 32: header version");
  }
}

TEST(ShardParser, BadFooterSize) {
  for (uint64_t v : {1ull, 48ull, 199ull, 201ull, 400ull, ~0ull}) {
    for (bool footer : {false, true}) {
      auto bytes = Serialize(SmallShard(footer));
      PutU64(bytes, 40, v);
      ExpectParseError(bytes, "at offset 40: header footer_size");
    }
  }
  // A footer shard whose header says 0: the footer is trailing garbage.
  auto bytes = Serialize(SmallShard(true));
  PutU64(bytes, 40, 0);
  ExpectParseError(bytes, "200 trailing bytes after the CAS info bookend");
  // A no-footer shard whose header says 200: its last 200 bytes are not a footer.
  bytes = Serialize(SmallShard(false));
  PutU64(bytes, 40, 200);
  EXPECT_FALSE(ParseShard(bytes).ok());
}

TEST(ShardParser, BadFooterVersion) {
  for (uint64_t v : {0ull, 2ull, ~0ull}) {
    auto bytes = Serialize(SmallShard(true));
    PutU64(bytes, bytes.size() - 200, v);
    ExpectParseError(bytes, "footer version");
  }
}

TEST(ShardParser, InconsistentFooterOffsets) {
  const auto good = Serialize(SmallShard(true));
  const size_t f = good.size() - 200;
  const ShardLayout l = ComputeShardLayout(SmallShard(true));
  struct Case {
    size_t field;
    uint64_t value;
    const char* needle;
  } cases[] = {
      {8, 0, "file_info_offset 0, expected 48"},
      {8, 96, "file_info_offset 96"},
      {8, ~0ull, "file_info_offset"},
      {16, l.cas_info_offset + 48, "cas_info_offset"},
      {16, l.cas_info_offset - 48, "cas_info_offset"},
      {16, ~0ull, "cas_info_offset"},
      {192, f + 1, "footer_offset"},
      {192, f - 48, "footer_offset"},
      {192, good.size(), "footer_offset"},
      {192, ~0ull, "footer_offset"},
  };
  for (const Case& c : cases) {
    auto bytes = good;
    PutU64(bytes, f + c.field, c.value);
    ExpectParseError(bytes, c.needle);
  }
}

TEST(ShardParser, MissingOrBadBookends) {
  const Shard s = SmallShard(false);
  const ShardLayout l = ComputeShardLayout(s);
  // File bookend replaced by an ordinary hash: the section goes on into the CAS records.
  auto bytes = Serialize(s);
  bytes[l.file_info_bookend_offset] = 0;
  EXPECT_FALSE(ParseShard(bytes).ok());
  // CAS bookend replaced.
  bytes = Serialize(s);
  bytes[l.cas_info_bookend_offset + 5] = 0x12;
  EXPECT_FALSE(ParseShard(bytes).ok());
  // Bookend tails must be zero.
  for (uint64_t at : {l.file_info_bookend_offset, l.cas_info_bookend_offset}) {
    for (size_t k : {32u, 36u, 40u, 47u}) {
      bytes = Serialize(s);
      bytes[at + k] = 1;
      ExpectParseError(bytes, "at offset " + std::to_string(at + 32) + ": ");
    }
  }
  // No bookend at all: the header alone, or the header and one file.
  ExpectParseError(RawShard().bytes(), "the file info bookend");
  ExpectParseError(RawShard().FileHeader(TestHash(1), 0, 0).bytes(), "the file info bookend");
  ExpectParseError(RawShard().Bookend().bytes(), "the CAS info bookend");
}

TEST(ShardParser, UnknownFileFlags) {
  for (uint32_t flags : {1u, 0x20000000u, 0x80000001u, 0xFFFFFFFFu}) {
    const auto bytes = RawShard().FileHeader(TestHash(1), flags, 0).Bookend().Bookend().bytes();
    ExpectParseError(bytes, "at offset 80: file flags");
  }
}

TEST(ShardParser, MixedVerificationIsRejected) {
  // File 0 without verification, file 1 with.
  auto bytes = RawShard()
                   .FileHeader(TestHash(1), 0, 1)
                   .Record(TestHash(2), 0, 10, 0, 1)
                   .FileHeader(TestHash(3), kFileFlagWithVerification, 1)
                   .Record(TestHash(4), 0, 10, 0, 1)
                   .Record(TestHash(5))
                   .Bookend()
                   .Bookend()
                   .bytes();
  ExpectParseError(bytes, "verification");
  // And the reverse.
  bytes = RawShard()
              .FileHeader(TestHash(1), kFileFlagWithVerification, 1)
              .Record(TestHash(2), 0, 10, 0, 1)
              .Record(TestHash(5))
              .FileHeader(TestHash(3), 0, 1)
              .Record(TestHash(4), 0, 10, 0, 1)
              .Bookend()
              .Bookend()
              .bytes();
  ExpectParseError(bytes, "file 1 lacks verification entries");
  // The writer refuses to produce either.
  Shard s;
  s.files.push_back(MakeFile(1, 1, true, false));
  s.files.push_back(MakeFile(2, 1, false, false));
  EXPECT_FALSE(SerializeShard(s).ok());
}

TEST(ShardParser, HugeCountsFailFast) {
  for (uint32_t flags : {0u, kFileFlagWithVerification, kKnownFileFlags}) {
    const auto bytes =
        RawShard().FileHeader(TestHash(1), flags, 0xFFFFFFFFu).Bookend().Bookend().bytes();
    ExpectParseError(bytes, "at offset 84: file with num_entries 4294967295 needs");
  }
  const auto bytes = RawShard().Bookend().CasHeader(TestHash(2), 0xFFFFFFFFu).Bookend().bytes();
  ExpectParseError(bytes, "at offset 132: CAS block with num_entries 4294967295 needs");
  // One record too many for what is there.
  const auto short_by_one =
      RawShard().Bookend().CasHeader(TestHash(2), 3).Record(TestHash(3)).Bookend().bytes();
  ExpectParseError(short_by_one, "needs 3 records of 48 bytes, but only 96 bytes remain");
  // Enough records, but then no bookend: the bookend was consumed as an entry.
  const auto no_bookend =
      RawShard().Bookend().CasHeader(TestHash(2), 2).Record(TestHash(3)).Bookend().bytes();
  ExpectParseError(no_bookend, "at offset 240: truncated: expected a CAS info header or the CAS");
}

TEST(ShardParser, TrailingBytes) {
  auto bytes = Serialize(SmallShard(false));
  bytes.push_back(0);
  ExpectParseError(bytes, "1 trailing bytes after the CAS info bookend");
  // After a footer: the footer is then read from the wrong place.
  bytes = Serialize(SmallShard(true));
  bytes.push_back(0);
  EXPECT_FALSE(ParseShard(bytes).ok());
  // Unexplained bytes between the CAS bookend and the footer.
  const Shard s = SmallShard(true);
  bytes = Serialize(s);
  const size_t f = bytes.size() - 200;
  bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(f), 12, 0);
  PutU64(bytes, bytes.size() - 8, f + 12);  // footer_offset made consistent
  ExpectParseError(bytes, "12 bytes lie between the CAS info bookend");
}

TEST(ShardParser, EmptyFileIsAccepted) {
  // xet-core records an empty file as 0 terms, the zero hash, and the verification flag.
  const auto bytes =
      RawShard().FileHeader(Hash(), kFileFlagWithVerification, 0).Bookend().Bookend().bytes();
  auto r = ParseShard(bytes);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->files.size(), 1u);
  EXPECT_TRUE(r->files[0].terms.empty());
  EXPECT_TRUE(r->files[0].has_verification());
  EXPECT_TRUE(ValidateUploadShard(*r).ok());
  EXPECT_EQ(Serialize(*r), bytes);
}

// ---- Writer rejections ----------------------------------------------------------------

TEST(ShardWriter, RefusesUnparseableShards) {
  {
    Shard s = SmallShard(false);
    s.files[1].file_hash = AllOnes();
    EXPECT_FALSE(SerializeShard(s).ok());
  }
  {
    Shard s = SmallShard(false);
    s.cas_infos[0].cas_hash = AllOnes();
    EXPECT_FALSE(SerializeShard(s).ok());
  }
  {
    Shard s = SmallShard(false);
    s.files[0].verification.pop_back();
    EXPECT_FALSE(SerializeShard(s).ok());
  }
  {
    Shard s = SmallShard(false);
    s.files[0].flags &= ~kFileFlagWithMetadataExt;
    EXPECT_FALSE(SerializeShard(s).ok());
  }
  {
    Shard s = SmallShard(false);
    s.files[1].metadata_ext = FileMetadataExt{};
    EXPECT_FALSE(SerializeShard(s).ok());
  }
  {
    Shard s = SmallShard(false);
    s.files[0].flags |= 1;
    EXPECT_FALSE(SerializeShard(s).ok());
  }
  {
    Shard s;
    s.files.push_back(MakeFile(1, 1, false, false));
    s.files[0].verification.push_back({});
    EXPECT_FALSE(SerializeShard(s).ok());
  }
  {
    Shard s = SmallShard(true);
    s.footer->version = 2;
    EXPECT_FALSE(SerializeShard(s).ok());
  }
  {
    Shard s = SmallShard(true);
    s.footer->lookup_tables.resize(12);
    EXPECT_FALSE(SerializeShard(s).ok());
  }
}

// ---- Global dedup builder -------------------------------------------------------------

TEST(ShardDedupBuilder, KeysChunkHashesOnly) {
  const std::vector<CasInfo> cas = {MakeCas(1, 3), MakeCas(2, 2)};
  const Hash key = TestHash(77);
  const Shard s = BuildGlobalDedupShard(cas, key, 100, 200);
  EXPECT_TRUE(s.files.empty());
  ASSERT_EQ(s.cas_infos.size(), 2u);
  for (size_t i = 0; i < cas.size(); ++i) {
    EXPECT_EQ(s.cas_infos[i].cas_hash, cas[i].cas_hash);
    EXPECT_EQ(s.cas_infos[i].num_bytes_in_cas, cas[i].num_bytes_in_cas);
    ASSERT_EQ(s.cas_infos[i].entries.size(), cas[i].entries.size());
    for (size_t e = 0; e < cas[i].entries.size(); ++e) {
      EXPECT_EQ(s.cas_infos[i].entries[e].chunk_hash,
                DedupProtectedHash(cas[i].entries[e].chunk_hash, key));
      EXPECT_EQ(s.cas_infos[i].entries[e].chunk_byte_range_start,
                cas[i].entries[e].chunk_byte_range_start);
    }
  }
  const auto bytes = Serialize(s);
  auto parsed = ParseShard(bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const ShardFooter& f = *parsed->footer;
  EXPECT_EQ(f.chunk_hash_hmac_key, key);
  EXPECT_EQ(f.shard_creation_timestamp, 100u);
  EXPECT_EQ(f.shard_key_expiry, 200u);
  const ShardLayout l = ComputeShardLayout(*parsed);
  EXPECT_EQ(f.lookup->file_lookup_offset, l.cas_info_end);
  EXPECT_EQ(f.lookup->file_lookup_offset, l.footer_offset);
  EXPECT_EQ(f.stats->materialized_bytes, 0u);
  EXPECT_TRUE(ValidateShardContents(*parsed).ok());
}

TEST(ShardDedupBuilder, ZeroKeyLeavesHashesPlain) {
  const std::vector<CasInfo> cas = {MakeCas(1, 3)};
  const Shard s = BuildGlobalDedupShard(cas, Hash(), 1, 2);
  EXPECT_EQ(s.cas_infos, cas);
}

// ---- Content validation ---------------------------------------------------------------

TEST(ShardValidation, AcceptsConsistentShards) {
  EXPECT_TRUE(ValidateShardContents(SmallShard(true)).ok());
  EXPECT_TRUE(ValidateUploadShard(SmallShard(false)).ok());
}

TEST(ShardValidation, RejectsInconsistentContents) {
  auto expect_invalid = [](const Shard& s, const std::string& needle) {
    const Status st = ValidateShardContents(s);
    ASSERT_FALSE(st.ok()) << needle;
    EXPECT_NE(st.message().find(needle), std::string::npos) << st.message();
  };
  Shard s = SmallShard(false);
  s.files[0].terms[1].chunk_index_end = s.files[0].terms[1].chunk_index_start;
  expect_invalid(s, "file 0 term 1: empty chunk range");
  s = SmallShard(false);
  s.files[1].terms[0].unpacked_segment_bytes = 0;
  expect_invalid(s, "file 1 term 0: unpacked_segment_bytes is 0");
  s = SmallShard(false);
  s.files[1].terms.clear();
  s.files[1].verification.clear();
  expect_invalid(s, "has no terms but is not the empty file");
  s = SmallShard(false);
  s.cas_infos[0].entries[1].chunk_byte_range_start += 1;
  expect_invalid(s, "entry 1: chunk_byte_range_start");
  s = SmallShard(false);
  s.cas_infos[1].num_bytes_in_cas += 1;
  expect_invalid(s, "num_bytes_in_cas");
  s = SmallShard(false);
  s.cas_infos[1].entries.clear();
  expect_invalid(s, "has no entries");
  s = SmallShard(false);
  s.cas_infos[0].entries[0].unpacked_segment_bytes = 0;
  expect_invalid(s, "entry 0: unpacked_segment_bytes is 0");
}

TEST(ShardValidation, UploadRules) {
  // A footer is accepted (the stock JS client sends one) and ignored.
  EXPECT_TRUE(ValidateUploadShard(SmallShard(true)).ok());
  Shard s;
  s.files.push_back(MakeFile(1, 1, false, true));
  const Status st = ValidateUploadShard(s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("no verification entries"), std::string::npos);
}

// ---- SHA-256 byte order ---------------------------------------------------------------

TEST(ShardSha256, StoredOrderReversesEachGroup) {
  std::array<uint8_t, 32> digest{};
  for (size_t i = 0; i < 32; ++i) digest[i] = static_cast<uint8_t>(i);
  const Hash stored = Sha256ToXetOrder(digest);
  EXPECT_EQ(stored.ToRawHex(), "07060504030201000f0e0d0c0b0a090817161514131211101f1e1d1c1b1a1918");
  // The Xet string of the stored value is the plain digest hex.
  EXPECT_EQ(stored.ToHex(), "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
  EXPECT_EQ(Sha256FromXetOrder(stored), digest);
}

}  // namespace
}  // namespace xet
