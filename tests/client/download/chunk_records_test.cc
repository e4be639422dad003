// Unit tests for the chunk record framing of fetched ranges: a whole range parses into its
// records; truncated, malformed, mismatched and overlong ranges are Corruption; a range fed
// in pieces of any size yields the same records as the whole one.
#include "client/download/chunk_records.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "format/compression.h"
#include "format/xorb.h"

namespace xet {
namespace {

// Appends one record with `payload` as stored bytes (kNone, both sizes equal) unless
// `usize` / `scheme` say otherwise.
void AddRecord(std::vector<uint8_t>& out, const std::vector<uint8_t>& payload, uint32_t usize = 0,
               uint8_t scheme = 0, uint8_t version = kXorbChunkHeaderVersion) {
  XorbChunkHeader h;
  h.version = version;
  h.compressed_size = static_cast<uint32_t>(payload.size());
  h.scheme = scheme;
  h.uncompressed_size = usize == 0 ? h.compressed_size : usize;
  const size_t at = out.size();
  out.resize(at + kXorbChunkHeaderSize);
  EncodeXorbChunkHeader(h, std::span<uint8_t>(out).subspan(at));
  out.insert(out.end(), payload.begin(), payload.end());
}

std::vector<uint8_t> Bytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 13);
  return v;
}

// Three stored records of 5, 1 and 300 bytes.
std::vector<uint8_t> ThreeRecords() {
  std::vector<uint8_t> range;
  AddRecord(range, Bytes(5, 1));
  AddRecord(range, Bytes(1, 2));
  AddRecord(range, Bytes(300, 3));
  return range;
}

TEST(ParseChunkRecords, ListsEveryRecord) {
  const auto range = ThreeRecords();
  std::vector<ChunkRecord> recs;
  ASSERT_TRUE(ParseChunkRecords(range, 3, &recs).ok());
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0].payload, 8u);
  EXPECT_EQ(recs[0].csize, 5u);
  EXPECT_EQ(recs[1].payload, 8u + 5 + 8);
  EXPECT_EQ(recs[1].usize, 1u);
  EXPECT_EQ(recs[2].payload, 8u + 5 + 8 + 1 + 8);
  EXPECT_EQ(recs[2].csize, 300u);
  EXPECT_EQ(recs[2].scheme, 0);
}

TEST(ParseChunkRecords, RejectsBadFraming) {
  const auto range = ThreeRecords();
  std::vector<ChunkRecord> recs;
  // Fewer chunks than records: bytes left over.
  Status st = ParseChunkRecords(range, 2, &recs);
  EXPECT_EQ(st.code(), Status::Code::kCorruption);
  EXPECT_NE(st.message().find("bytes after its 2 chunks"), std::string::npos) << st.message();
  // More chunks than records: ends inside.
  st = ParseChunkRecords(range, 4, &recs);
  EXPECT_NE(st.message().find("ends inside chunk 3 of 4"), std::string::npos) << st.message();
  // Truncated payload.
  std::vector<uint8_t> cut(range.begin(), range.end() - 1);
  EXPECT_EQ(ParseChunkRecords(cut, 3, &recs).code(), Status::Code::kCorruption);
  // Bad version, unknown scheme, zero and oversized uncompressed sizes.
  std::vector<uint8_t> v;
  AddRecord(v, Bytes(4, 0), 0, 0, kXorbChunkHeaderVersion + 1);
  EXPECT_NE(ParseChunkRecords(v, 1, &recs).message().find("malformed chunk record 0"),
            std::string::npos);
  v.clear();
  AddRecord(v, Bytes(4, 0), 4, 77);
  EXPECT_EQ(ParseChunkRecords(v, 1, &recs).code(), Status::Code::kCorruption);
  v.clear();
  AddRecord(v, Bytes(4, 0), kXorbMaxChunkSize + 1, 1);
  EXPECT_EQ(ParseChunkRecords(v, 1, &recs).code(), Status::Code::kCorruption);
  // A stored chunk whose sizes differ.
  v.clear();
  AddRecord(v, Bytes(4, 0), 9, 0);
  st = ParseChunkRecords(v, 1, &recs);
  EXPECT_NE(st.message().find("mismatched sizes"), std::string::npos) << st.message();
}

// Feeds `range` in pieces of `piece` bytes; collects (index, payload) of each record.
Status FeedInPieces(const std::vector<uint8_t>& range, uint32_t num_chunks, size_t piece,
                    std::vector<std::pair<uint32_t, std::vector<uint8_t>>>* got) {
  ChunkRecordStream stream;
  stream.Reset(num_chunks, range.size());
  const ChunkRecordStream::RecordFn record = [&](uint32_t i, const ChunkRecord& r,
                                                 std::span<const uint8_t> payload) {
    EXPECT_EQ(payload.size(), r.csize);
    got->emplace_back(i, std::vector<uint8_t>(payload.begin(), payload.end()));
    return Status::Ok();
  };
  for (size_t at = 0; at < range.size(); at += piece) {
    const size_t n = std::min(piece, range.size() - at);
    XET_RETURN_IF_ERROR(stream.Feed(std::span<const uint8_t>(range).subspan(at, n), record));
  }
  return stream.Finish();
}

TEST(ChunkRecordStream, AnyPieceSizeYieldsTheSameRecords) {
  const auto range = ThreeRecords();
  const std::vector<std::vector<uint8_t>> want = {Bytes(5, 1), Bytes(1, 2), Bytes(300, 3)};
  for (size_t piece :
       {size_t{1}, size_t{3}, size_t{7}, size_t{8}, size_t{9}, size_t{64}, range.size()}) {
    std::vector<std::pair<uint32_t, std::vector<uint8_t>>> got;
    ASSERT_TRUE(FeedInPieces(range, 3, piece, &got).ok()) << piece;
    ASSERT_EQ(got.size(), 3u) << piece;
    for (uint32_t i = 0; i < 3; ++i) {
      EXPECT_EQ(got[i].first, i);
      EXPECT_EQ(got[i].second, want[i]) << "piece " << piece << " record " << i;
    }
  }
}

TEST(ChunkRecordStream, RejectsBadFraming) {
  const auto range = ThreeRecords();
  std::vector<std::pair<uint32_t, std::vector<uint8_t>>> got;
  // A range longer than announced.
  ChunkRecordStream stream;
  stream.Reset(3, range.size() - 1);
  Status st = stream.Feed(
      range, [](uint32_t, const ChunkRecord&, std::span<const uint8_t>) { return Status::Ok(); });
  EXPECT_NE(st.message().find("longer than its"), std::string::npos) << st.message();
  // More records than chunks.
  got.clear();
  st = FeedInPieces(range, 2, 5, &got);
  EXPECT_NE(st.message().find("after its 2 chunks"), std::string::npos) << st.message();
  // Ends inside a record.
  got.clear();
  std::vector<uint8_t> cut(range.begin(), range.end() - 10);
  st = FeedInPieces(cut, 3, 4, &got);
  EXPECT_EQ(st.code(), Status::Code::kCorruption);
  // A stored chunk with mismatched sizes, and an unknown scheme.
  std::vector<uint8_t> v;
  AddRecord(v, Bytes(4, 0), 9, 0);
  EXPECT_EQ(FeedInPieces(v, 1, 2, &got).code(), Status::Code::kCorruption);
  v.clear();
  AddRecord(v, Bytes(4, 0), 4, 77);
  EXPECT_EQ(FeedInPieces(v, 1, 100, &got).code(), Status::Code::kCorruption);
  // An error of the record callback is returned as is.
  stream.Reset(3, range.size());
  st = stream.Feed(range, [](uint32_t i, const ChunkRecord&, std::span<const uint8_t>) {
    return i == 1 ? Status::IoError("sink") : Status::Ok();
  });
  EXPECT_EQ(st.code(), Status::Code::kIoError);
}

}  // namespace
}  // namespace xet
