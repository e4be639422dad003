#include "client/upload/shard_builder.h"

#include <gtest/gtest.h>

#include <random>

#include "format/keyed_hash.h"
#include "format/merkle.h"
#include "format/shard_parser.h"
#include "format/shard_validation.h"
#include "format/shard_writer.h"

namespace xet {
namespace {

Hash H(uint32_t v) {
  Hash h;
  std::memcpy(h.mutable_data(), &v, 4);
  h.mutable_data()[8] = 1;
  return h;
}

TEST(FileInfoBuilderTest, MergesConsecutiveChunksIntoTerms) {
  FileInfoBuilder b;
  b.AddChunk(0, 0, H(1), 10);
  b.AddChunk(0, 1, H(2), 20);
  b.AddChunk(1, 5, H(3), 30);  // other xorb
  b.AddChunk(1, 7, H(4), 40);  // gap
  b.AddChunk(1, 8, H(5), 50);
  PendingFileInfo f = b.Finish(H(100), std::nullopt);
  ASSERT_EQ(f.terms.size(), 3u);
  EXPECT_EQ(f.term_xorbs, (std::vector<uint32_t>{0, 1, 1}));
  EXPECT_EQ(f.terms[0].chunk_index_start, 0u);
  EXPECT_EQ(f.terms[0].chunk_index_end, 2u);
  EXPECT_EQ(f.terms[0].unpacked_segment_bytes, 30u);
  EXPECT_EQ(f.terms[2].chunk_index_start, 7u);
  EXPECT_EQ(f.terms[2].chunk_index_end, 9u);
  EXPECT_EQ(f.terms[2].unpacked_segment_bytes, 90u);
  std::vector<Hash> last = {H(4), H(5)};
  EXPECT_EQ(f.verification[2].range_hash, VerificationHash(last));

  FileInfo info = ResolveFileInfo(f, [](uint32_t id) { return H(1000 + id); });
  EXPECT_EQ(info.terms[1].cas_hash, H(1001));
  EXPECT_TRUE(info.has_verification());
  EXPECT_FALSE(info.has_metadata_ext());
  EXPECT_EQ(info.size(), 150u);
}

TEST(ShardBuilderTest, UploadShardParsesBackAndValidates) {
  // A real xorb of two chunks.
  std::vector<uint8_t> a(5000, 'a'), b(7000);
  std::mt19937 rng(1);
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  XorbBuilder xb;
  ASSERT_TRUE(xb.Add(a).ok());
  ASSERT_TRUE(xb.Add(b).ok());
  SerializedXorb x = xb.Finish();

  FileInfoBuilder fb;
  fb.AddChunk(0, 0, ChunkHash(a), a.size());
  fb.AddChunk(0, 1, ChunkHash(b), b.size());
  Sha256Digest sha{};
  sha[0] = 7;
  PendingFileInfo pf = fb.Finish(FileHash(x.table.chunks), sha);
  FileInfo info = ResolveFileInfo(pf, [&](uint32_t) { return x.hash; });
  EXPECT_TRUE(info.has_metadata_ext());
  FileInfo empty = ResolveFileInfo(FileInfoBuilder().Finish(Hash(), std::nullopt),
                                   [](uint32_t) { return Hash(); });

  CasInfo cas = CasInfoForXorb(x.hash, x.table, x.bytes.size());
  EXPECT_EQ(cas.num_bytes_in_cas, 12000u);
  auto shards = SplitIntoShards({info, empty}, {cas});
  ASSERT_TRUE(shards.ok());
  ASSERT_EQ(shards->size(), 1u);
  auto bytes = SerializeShardForUpload((*shards)[0]);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(bytes->size(), FileInfoSerializedSize(info) + FileInfoSerializedSize(empty) +
                               CasInfoSerializedSize(cas) + kShardHeaderSize + 2 * kShardEntrySize);
  auto parsed = ParseShard(*bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_TRUE(ValidateUploadShard(*parsed).ok()) << ValidateUploadShard(*parsed).ToString();
  EXPECT_EQ(parsed->files[0], info);
  EXPECT_EQ(parsed->cas_infos[0], cas);
}

TEST(ShardBuilderTest, SplitsAtTheSizeLimit) {
  std::vector<FileInfo> files;
  for (uint32_t i = 0; i < 10; ++i) {
    FileInfo f;
    f.file_hash = H(i);
    f.flags = kFileFlagWithVerification;
    f.terms.push_back({H(99), 0, 100, 0, 1});
    f.verification.push_back({H(98), {}});
    files.push_back(f);
  }
  const uint64_t per_file = FileInfoSerializedSize(files[0]);  // 144
  const uint64_t limit = kShardHeaderSize + 2 * kShardEntrySize + 3 * per_file;
  auto shards = SplitIntoShards(files, {}, limit);
  ASSERT_TRUE(shards.ok());
  ASSERT_EQ(shards->size(), 4u);  // 3 + 3 + 3 + 1
  size_t total = 0;
  for (const Shard& s : *shards) {
    auto bytes = SerializeShardForUpload(s);
    ASSERT_TRUE(bytes.ok());
    EXPECT_LE(bytes->size(), limit);
    total += s.files.size();
  }
  EXPECT_EQ(total, 10u);
  EXPECT_FALSE(SplitIntoShards(files, {}, per_file).ok());  // one entry cannot fit
}

}  // namespace
}  // namespace xet
