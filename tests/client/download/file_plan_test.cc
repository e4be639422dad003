#include "client/download/file_plan.h"

#include <gtest/gtest.h>

#include <array>

namespace xet {
namespace {

Hash H(uint8_t b) {
  std::array<uint8_t, 32> a{};
  a[0] = b;
  return Hash::FromArray(a);
}

// Xorb A: chunks of 10, 20, 30 and 40 bytes whose records sit at 0, 50, 100, 150 (200 bytes
// in all), one fetch range. Terms: A[1,3) (50 bytes), A[0,1) (10), A[2,4) (70): 130 bytes.
Reconstruction Detailed() {
  Reconstruction r;
  r.terms = {{H(1), 1, 3, 50, {20, 30}}, {H(1), 0, 1, 10, {10}}, {H(1), 2, 4, 70, {30, 40}}};
  r.xorbs.push_back({H(1), {FetchEntry{"u", {{0, 4, 0, 199, {0, 50, 100, 150, 200}}}}}});
  return r;
}

Reconstruction Plain() {
  Reconstruction r = Detailed();
  for (auto& t : r.terms) t.chunk_lengths.clear();
  r.xorbs[0].second[0].ranges[0].chunk_offsets.clear();
  return r;
}

std::vector<FilePlan::Piece> MapOf(const FilePlan& p, uint64_t offset, uint64_t length) {
  std::vector<FilePlan::Piece> out;
  p.Map(offset, length, &out);
  return out;
}

void ExpectPiece(const FilePlan::Piece& pc, uint32_t term, uint32_t first, uint32_t end,
                 uint64_t data) {
  EXPECT_EQ(pc.term, term);
  EXPECT_EQ(pc.first, first);
  EXPECT_EQ(pc.end, end);
  EXPECT_EQ(pc.data, data);
}

TEST(FilePlan, MapsByteRangesToExactlyTheirChunks) {
  auto p = FilePlan::Build(Detailed(), 130);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->all_exact());
  auto m = MapOf(*p, 0, 1);  // first byte: chunk 1 of A
  ASSERT_EQ(m.size(), 1u);
  ExpectPiece(m[0], 0, 1, 2, 0);
  m = MapOf(*p, 19, 2);  // the boundary of chunks 1 and 2
  ASSERT_EQ(m.size(), 1u);
  ExpectPiece(m[0], 0, 1, 3, 0);
  m = MapOf(*p, 20, 30);  // exactly chunk 2
  ASSERT_EQ(m.size(), 1u);
  ExpectPiece(m[0], 0, 2, 3, 20);
  m = MapOf(*p, 45, 10);  // across terms 0 and 1
  ASSERT_EQ(m.size(), 2u);
  ExpectPiece(m[0], 0, 2, 3, 20);
  ExpectPiece(m[1], 1, 0, 1, 50);
  m = MapOf(*p, 0, 130);  // everything
  ASSERT_EQ(m.size(), 3u);
  ExpectPiece(m[2], 2, 2, 4, 60);
  m = MapOf(*p, 129, 100);  // clipped at the end: the last chunk
  ASSERT_EQ(m.size(), 1u);
  ExpectPiece(m[0], 2, 3, 4, 90);
  EXPECT_TRUE(MapOf(*p, 130, 1).empty());  // at EOF
  EXPECT_TRUE(MapOf(*p, 500, 1).empty());
  EXPECT_TRUE(MapOf(*p, 10, 0).empty());  // empty read
  EXPECT_EQ(p->ChunkLength(p->terms()[2], 3), 40u);
}

TEST(FilePlan, RunsAreSubRangesOfTheSignedRange) {
  auto p = FilePlan::Build(Detailed(), 130);
  ASSERT_TRUE(p.ok());
  const FilePlan::Run r = p->RunFor(p->terms()[0], 1, 3);
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.first, 1u);
  EXPECT_EQ(r.end, 3u);
  EXPECT_EQ(r.byte_first, 50u);
  EXPECT_EQ(r.byte_last, 149u);
  const FilePlan::Run n = p->Narrow(r, 2, 3);
  EXPECT_EQ(n.byte_first, 100u);
  EXPECT_EQ(n.byte_last, 149u);
  // Read-ahead of the whole file: A[1,3), then A[0,1) (not contiguous), then A[2,4).
  std::vector<FilePlan::Run> runs;
  p->Runs(0, 130, 1000, &runs);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].first, 1u);
  EXPECT_EQ(runs[0].end, 3u);
  EXPECT_EQ(runs[1].first, 0u);
  EXPECT_EQ(runs[1].end, 1u);
  EXPECT_EQ(runs[2].first, 2u);
  EXPECT_EQ(runs[2].end, 4u);
  EXPECT_EQ(runs[2].byte_first, 100u);
  EXPECT_EQ(runs[2].byte_last, 199u);
  // A small run bound cuts runs at every chunk.
  runs.clear();
  p->Runs(0, 50, 60, &runs);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].end, 2u);
  EXPECT_EQ(runs[1].first, 2u);
}

TEST(FilePlan, OffsetIntoFirstRangeShiftsTheFile) {
  Reconstruction r = Detailed();
  r.offset_into_first_range = 25;  // the file starts 5 bytes into chunk 2
  auto p = FilePlan::Build(r, 105);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->skip(), 25u);
  auto m = MapOf(*p, 0, 1);
  ASSERT_EQ(m.size(), 1u);
  ExpectPiece(m[0], 0, 2, 3, 20);  // data position 25 lies in chunk 2 (data 20..49)
  m = MapOf(*p, 104, 1);
  ASSERT_EQ(m.size(), 1u);
  ExpectPiece(m[0], 2, 3, 4, 90);
  EXPECT_FALSE(FilePlan::Build(r, 130).ok());  // the terms hold 105 bytes of the file
}

TEST(FilePlan, WithoutDetailTermsAreWholeUnits) {
  auto p = FilePlan::Build(Plain(), 130);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_FALSE(p->all_exact());
  auto m = MapOf(*p, 45, 10);
  ASSERT_EQ(m.size(), 2u);
  ExpectPiece(m[0], 0, 1, 3, 0);
  ExpectPiece(m[1], 1, 0, 1, 50);
  const FilePlan::Run r = p->RunFor(p->terms()[0], 1, 3);
  EXPECT_FALSE(r.exact);
  EXPECT_EQ(r.first, 0u);
  EXPECT_EQ(r.end, 4u);
  EXPECT_EQ(r.byte_first, 0u);
  EXPECT_EQ(r.byte_last, 199u);
  std::vector<FilePlan::Run> runs;
  p->Runs(0, 130, 10, &runs);
  EXPECT_EQ(runs.size(), 1u);  // one range serves every term
  // Lengths without offsets (or the reverse) leave the term inexact.
  Reconstruction half = Detailed();
  half.xorbs[0].second[0].ranges[0].chunk_offsets.clear();
  auto q = FilePlan::Build(half, 130);
  ASSERT_TRUE(q.ok());
  EXPECT_FALSE(q->terms()[0].exact());
}

TEST(FilePlan, MalformedAnswersAreCorruption) {
  auto expect_corrupt = [](Reconstruction r, uint64_t size, const char* what) {
    auto p = FilePlan::Build(std::move(r), size);
    ASSERT_FALSE(p.ok()) << what;
    EXPECT_EQ(p.status().code(), Status::Code::kCorruption) << what;
  };
  Reconstruction r = Detailed();
  r.terms[0].chunk_lengths = {20};
  expect_corrupt(r, 130, "too few lengths");
  r = Detailed();
  r.terms[0].chunk_lengths = {20, 31};
  expect_corrupt(r, 130, "lengths add up to another length");
  r = Detailed();
  r.terms[0].chunk_lengths = {0, 50};
  expect_corrupt(r, 130, "a zero length");
  r = Detailed();
  r.xorbs[0].second[0].ranges[0].chunk_offsets = {0, 50, 100, 200};
  expect_corrupt(r, 130, "too few offsets");
  r = Detailed();
  r.xorbs[0].second[0].ranges[0].chunk_offsets = {0, 100, 50, 150, 200};
  expect_corrupt(r, 130, "descending offsets");
  r = Detailed();
  r.xorbs[0].second[0].ranges[0].chunk_offsets = {1, 50, 100, 150, 200};
  expect_corrupt(r, 130, "offsets not from the range's start");
  r = Detailed();
  r.xorbs[0].second[0].ranges[0].chunk_offsets = {0, 50, 100, 150, 199};
  expect_corrupt(r, 130, "offsets not to the range's end");
  expect_corrupt(Detailed(), 131, "terms shorter than the file");
  expect_corrupt(Detailed(), 129, "terms longer than the file");
  r = Detailed();
  r.offset_into_first_range = 50;
  expect_corrupt(r, 80, "offset past the first term");
  r = Detailed();
  r.terms[2].chunk_end = 5;
  expect_corrupt(r, 130, "chunks outside every range");
  r = Detailed();
  r.terms[1].xorb_hash = H(9);
  expect_corrupt(r, 130, "a xorb without fetch entries");
  r = Detailed();
  r.terms.clear();
  expect_corrupt(r, 130, "no terms");
  EXPECT_TRUE(FilePlan::Build(Reconstruction{}, 0).ok());  // an empty file needs none
}

}  // namespace
}  // namespace xet
