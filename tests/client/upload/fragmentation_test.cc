#include "client/upload/fragmentation.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace xet {
namespace {

// Runs the filter over a pattern ('K' known, 'N' new; each chunk `size` bytes) and returns
// the decision per chunk ('R' reference, 'U' upload), checking verdicts cover every chunk
// exactly once and in order.
std::string Decide(const std::string& pattern, uint64_t size = 64 * 1024) {
  FragmentationFilter f;
  std::vector<FragmentationFilter::Verdict> v;
  for (char c : pattern) f.Push(c == 'K', size, &v);
  f.Finish(&v);
  std::string out;
  for (const auto& x : v) out.append(x.count, x.reference ? 'R' : 'U');
  return out;
}

TEST(FragmentationFilterTest, WholeKnownFileIsReferenced) {
  EXPECT_EQ(Decide("KKK"), "RRR");
  EXPECT_EQ(Decide("K"), "R");
}

TEST(FragmentationFilterTest, NewFileIsUploaded) { EXPECT_EQ(Decide("NNNN"), "UUUU"); }

TEST(FragmentationFilterTest, ShortInteriorRunIsUploaded) {
  EXPECT_EQ(Decide("NKKKN"), "UUUUU");
  EXPECT_EQ(Decide("NNKKKKKKKN"), "UUUUUUUUUU");  // 7 chunks < 8
}

TEST(FragmentationFilterTest, LongInteriorRunIsReferenced) {
  EXPECT_EQ(Decide("NKKKKKKKKN"), "URRRRRRRRU");  // 8 chunks
  EXPECT_EQ(Decide("NKKKKKKKKKKKN"), "URRRRRRRRRRRU");
}

TEST(FragmentationFilterTest, RunOfManyBytesIsReferencedEvenIfShort) {
  // 2 chunks of 512 KiB = 1 MiB: enough bytes.
  EXPECT_EQ(Decide("NKKN", 512 * 1024), "URRU");
  EXPECT_EQ(Decide("NKN", 512 * 1024), "UUU");
}

TEST(FragmentationFilterTest, EdgeRunsAreKept) {
  EXPECT_EQ(Decide("KKNNN"), "RRUUU");  // at the start
  EXPECT_EQ(Decide("NNNKK"), "UUURR");  // at the end
  EXPECT_EQ(Decide("KNKNK"), "RUUUR");  // the middle one is interior and short
}

TEST(FragmentationFilterTest, LookAheadIsBounded) {
  FragmentationFilter f;
  std::vector<FragmentationFilter::Verdict> v;
  f.Push(false, 1000, &v);
  for (size_t i = 0; i < 100; ++i) {
    f.Push(true, 1000, &v);
    EXPECT_LT(f.undecided(), kMinDedupRunChunks);
  }
}

TEST(FragmentationFilterTest, FinishResetsForTheNextFile) {
  FragmentationFilter f;
  std::vector<FragmentationFilter::Verdict> v;
  f.Push(false, 10, &v);
  f.Finish(&v);
  v.clear();
  f.Push(true, 10, &v);  // first chunk of a new file: an edge
  ASSERT_EQ(v.size(), 1u);
  EXPECT_TRUE(v[0].reference);
}

}  // namespace
}  // namespace xet
