#include "client/download/block_planner.h"

#include <gtest/gtest.h>

namespace xet {
namespace {

Hash H(uint8_t b) {
  std::array<uint8_t, 32> a{};
  a[0] = b;
  return Hash::FromArray(a);
}

TEST(SplitBlocks, CutsAtBlockMultiplesFromFirst) {
  EXPECT_EQ(SplitBlocks(0, 9, 4), (std::vector<ByteSpan>{{0, 3}, {4, 7}, {8, 9}}));
  EXPECT_EQ(SplitBlocks(0, 7, 4), (std::vector<ByteSpan>{{0, 3}, {4, 7}}));
  EXPECT_EQ(SplitBlocks(5, 5, 4), (std::vector<ByteSpan>{{5, 5}}));
  EXPECT_EQ(SplitBlocks(3, 12, 100), (std::vector<ByteSpan>{{3, 12}}));
  EXPECT_EQ(SplitBlocks(0, 2, 0), (std::vector<ByteSpan>{{0, 0}, {1, 1}, {2, 2}}));
  EXPECT_TRUE(SplitBlocks(5, 4, 4).empty());
  // No overflow at the top of the range.
  const auto top = SplitBlocks(UINT64_MAX - 5, UINT64_MAX, 4);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top.back().last, UINT64_MAX);
}

// Two xorbs; xorb A's range [0,4) serves terms 0 and 2 (chunk reuse), xorb B's two ranges
// sit in one entry.
Reconstruction ThreeTerms() {
  Reconstruction r;
  r.terms = {
      {H(1), 0, 2, 100, {}}, {H(2), 0, 1, 50, {}}, {H(1), 1, 4, 120, {}}, {H(2), 5, 6, 30, {}}};
  r.xorbs.push_back({H(1), {FetchEntry{"u1", {{0, 4, 0, 999, {}}}}}});
  r.xorbs.push_back({H(2), {FetchEntry{"u2", {{0, 1, 0, 99, {}}, {5, 6, 500, 599, {}}}}}});
  return r;
}

TEST(PlanBlock, MapsTermsToRangesAndOffsets) {
  const Reconstruction r = ThreeTerms();
  auto plan = PlanBlock(r, {1000, 1299}, 1 << 20);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->terms.size(), 4u);
  ASSERT_EQ(plan->ranges.size(), 3u);
  // Terms 0 and 2 share xorb A's range.
  EXPECT_EQ(plan->terms[0].range_ref, plan->terms[2].range_ref);
  EXPECT_EQ(plan->ranges[plan->terms[0].range_ref].terms, (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(plan->terms[2].chunk_offset, 1u);
  EXPECT_EQ(plan->terms[2].num_chunks, 3u);
  EXPECT_EQ(plan->terms[3].chunk_offset, 0u);  // relative to its own range (5..6)
  uint64_t out = 0;
  for (const auto& t : plan->terms) {
    EXPECT_EQ(t.out_offset, out);
    EXPECT_EQ(t.skip, 0u);
    EXPECT_EQ(t.take, t.unpacked_length);
    EXPECT_EQ(t.data_offset, 1000 + out);
    out += t.take;
  }
  EXPECT_EQ(out, 300u);
  // B's two ranges are adjacent in one entry: one call; A's range another.
  ASSERT_EQ(plan->tasks.size(), 2u);
  uint64_t bytes = 0;
  for (const auto& t : plan->tasks) {
    bytes += t.bytes;
    if (t.xorb == 1) {
      EXPECT_EQ(t.first_range, 0u);
      EXPECT_EQ(t.last_range, 1u);
      EXPECT_EQ(t.refs.size(), 2u);
    }
  }
  EXPECT_EQ(bytes, 1000u + 100u + 100u);
}

TEST(PlanBlock, SmallTaskLimitSplitsMultiRangeCalls) {
  auto plan = PlanBlock(ThreeTerms(), {0, 299}, 150);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->tasks.size(), 3u);            // A alone (over the limit), B's ranges one each
  EXPECT_EQ(plan->tasks.front().bytes, 1000u);  // largest first
}

TEST(PlanBlock, MidChunkStartAndShortEnd) {
  Reconstruction r = ThreeTerms();
  r.offset_into_first_range = 30;
  // 70 bytes of term 0, all 50 of term 1, 40 of term 2; term 3 not needed.
  auto plan = PlanBlock(r, {500, 659}, 1 << 20);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->terms[0].skip, 30u);
  EXPECT_EQ(plan->terms[0].take, 70u);
  EXPECT_EQ(plan->terms[0].data_offset, 470u);
  EXPECT_EQ(plan->terms[1].out_offset, 70u);
  EXPECT_EQ(plan->terms[2].take, 40u);
  EXPECT_EQ(plan->terms[3].take, 0u);
  // Term 3's range serves nothing written, so it is not in its range's term list.
  EXPECT_TRUE(plan->ranges[plan->terms[3].range_ref].terms.empty());
}

TEST(PlanBlock, RejectsInconsistentAnswers) {
  {
    Reconstruction r = ThreeTerms();
    r.terms[2].chunk_end = 5;  // beyond A's only range
    EXPECT_EQ(PlanBlock(r, {0, 299}, 1 << 20).status().code(), Status::Code::kCorruption);
  }
  {
    Reconstruction r = ThreeTerms();
    r.xorbs.pop_back();  // B has no fetch entry
    EXPECT_EQ(PlanBlock(r, {0, 299}, 1 << 20).status().code(), Status::Code::kCorruption);
  }
  {
    Reconstruction r = ThreeTerms();  // 300 bytes of terms, 301 asked for
    EXPECT_EQ(PlanBlock(r, {0, 300}, 1 << 20).status().code(), Status::Code::kCorruption);
  }
  {
    Reconstruction r = ThreeTerms();
    r.offset_into_first_range = 100;  // the whole first term
    EXPECT_EQ(PlanBlock(r, {100, 299}, 1 << 20).status().code(), Status::Code::kCorruption);
  }
  {
    Reconstruction r = ThreeTerms();
    r.offset_into_first_range = 10;  // before the start of the file
    EXPECT_EQ(PlanBlock(r, {5, 200}, 1 << 20).status().code(), Status::Code::kCorruption);
  }
  {
    Reconstruction r = ThreeTerms();
    r.xorbs[1].second[0].ranges[1].byte_end = 10;  // descending bytes
    EXPECT_EQ(PlanBlock(r, {0, 299}, 1 << 20).status().code(), Status::Code::kCorruption);
  }
  {
    Reconstruction r;
    EXPECT_EQ(PlanBlock(r, {0, 0}, 1 << 20).status().code(), Status::Code::kCorruption);
  }
}

// One xorb with two fetch entries: terms are served from whichever entry holds their
// chunks, and a range used twice gets one RangeRef.
TEST(PlanBlock, TermsFoundInALaterFetchEntry) {
  Reconstruction r;
  r.terms = {
      {H(1), 4, 6, 100, {}}, {H(1), 0, 2, 60, {}}, {H(1), 8, 9, 40, {}}, {H(1), 5, 6, 100, {}}};
  r.xorbs.push_back({H(1),
                     {FetchEntry{"u1", {{0, 2, 0, 199, {}}}},
                      FetchEntry{"u2", {{4, 6, 400, 599, {}}, {8, 9, 800, 899, {}}}}}});
  auto plan = PlanBlock(r, {0, 299}, 1 << 20);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->ranges.size(), 3u);
  const auto ref_is = [&](uint32_t i, uint32_t entry, uint32_t range, std::vector<uint32_t> terms) {
    EXPECT_EQ(plan->ranges[i].xorb, 0u) << i;
    EXPECT_EQ(plan->ranges[i].entry, entry) << i;
    EXPECT_EQ(plan->ranges[i].range, range) << i;
    EXPECT_EQ(plan->ranges[i].terms, terms) << i;
  };
  ref_is(0, 1, 0, {0, 3});
  ref_is(1, 0, 0, {1});
  ref_is(2, 1, 1, {2});
  EXPECT_EQ(plan->terms[3].range_ref, 0u);
  EXPECT_EQ(plan->terms[3].chunk_offset, 1u);
  EXPECT_EQ(plan->terms[2].range_ref, 2u);
  EXPECT_EQ(plan->terms[2].chunk_offset, 0u);
  // The second entry's two ranges make one call of 300 bytes, first; the first entry's one.
  ASSERT_EQ(plan->tasks.size(), 2u);
  EXPECT_EQ(plan->tasks[0].entry, 1u);
  EXPECT_EQ(plan->tasks[0].first_range, 0u);
  EXPECT_EQ(plan->tasks[0].last_range, 1u);
  EXPECT_EQ(plan->tasks[0].refs, (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(plan->tasks[0].bytes, 300u);
  EXPECT_EQ(plan->tasks[1].entry, 0u);
  EXPECT_EQ(plan->tasks[1].refs, (std::vector<uint32_t>{1}));
  EXPECT_EQ(plan->tasks[1].bytes, 200u);
}

TEST(PlanBlock, RejectsEmptyTermsRangesAndSpans) {
  {
    Reconstruction r = ThreeTerms();
    r.terms[1].chunk_end = r.terms[1].chunk_start;  // no chunks
    EXPECT_EQ(PlanBlock(r, {0, 249}, 1 << 20).status().code(), Status::Code::kCorruption);
  }
  {
    Reconstruction r = ThreeTerms();
    r.terms[1].unpacked_length = 0;  // no bytes
    EXPECT_EQ(PlanBlock(r, {0, 249}, 1 << 20).status().code(), Status::Code::kCorruption);
  }
  {
    Reconstruction r = ThreeTerms();
    r.xorbs[0].second[0].ranges[0].chunk_end = 0;  // a fetch range without chunks
    EXPECT_EQ(PlanBlock(r, {0, 299}, 1 << 20).status().code(), Status::Code::kCorruption);
  }
  EXPECT_EQ(PlanBlock(ThreeTerms(), {5, 4}, 1 << 20).status().code(),
            Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace xet
