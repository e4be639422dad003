// Unit tests for AnswerBuffers: leases stay within the budget (one lease alone may exceed
// it), returned buffers are reused smallest-fitting first, free buffers are dropped to
// make room, and a failed download keeps none.
#include "client/download/answer_buffers.h"

#include <gtest/gtest.h>

#include <vector>

namespace xet {
namespace {

using Dropped = std::vector<std::vector<uint8_t>>;

// Leases `charge` and allocates a fresh buffer as the transfer does.
AnswerBuffers::Lease MustLease(AnswerBuffers& a, uint64_t charge, Dropped* dropped) {
  AnswerBuffers::Lease lease;
  EXPECT_TRUE(a.TryLease(charge, &lease, dropped)) << charge;
  if (lease.fresh) lease.buffer.reserve(lease.counted);
  return lease;
}

constexpr uint64_t kMiB = 1ull << 20;

TEST(AnswerBuffers, NewBuffersRoundUpWithinTheBudget) {
  AnswerBuffers a(10 * kMiB);
  Dropped dropped;
  AnswerBuffers::Lease l = MustLease(a, 3 * kMiB, &dropped);
  EXPECT_TRUE(l.fresh);
  EXPECT_EQ(l.counted, 4 * kMiB);  // a multiple of the 2 MiB granule
  EXPECT_EQ(a.held(), 4 * kMiB);
  AnswerBuffers::Lease m = MustLease(a, 5 * kMiB, &dropped);
  EXPECT_EQ(m.counted, 6 * kMiB);  // exactly what is left
  EXPECT_EQ(a.held(), 10 * kMiB);
  // Nothing fits while both are lent.
  AnswerBuffers::Lease n;
  EXPECT_FALSE(a.TryLease(1, &n, &dropped));
  EXPECT_EQ(a.leased(), 2u);
  a.Return(std::move(l), false, &dropped);
  a.Return(std::move(m), false, &dropped);
  EXPECT_EQ(a.leased(), 0u);
  EXPECT_EQ(a.free_buffers(), 2u);
  EXPECT_TRUE(dropped.empty());
}

TEST(AnswerBuffers, ReusesTheSmallestFreeBufferThatFits) {
  AnswerBuffers a(64 * kMiB);
  Dropped dropped;
  AnswerBuffers::Lease big = MustLease(a, 16 * kMiB, &dropped);
  AnswerBuffers::Lease small = MustLease(a, 4 * kMiB, &dropped);
  const uint8_t* small_data = small.buffer.data();
  a.Return(std::move(big), false, &dropped);
  a.Return(std::move(small), false, &dropped);
  const uint64_t held = a.held();
  AnswerBuffers::Lease again = MustLease(a, 3 * kMiB, &dropped);
  EXPECT_FALSE(again.fresh);
  EXPECT_EQ(again.buffer.data(), small_data);
  EXPECT_EQ(a.held(), held);  // a reused buffer adds nothing
}

TEST(AnswerBuffers, DropsFreeBuffersToMakeRoom) {
  AnswerBuffers a(8 * kMiB);
  Dropped dropped;
  AnswerBuffers::Lease l = MustLease(a, 2 * kMiB, &dropped);
  a.Return(std::move(l), false, &dropped);
  ASSERT_EQ(a.free_buffers(), 1u);
  // 7 MiB do not fit beside the free 2 MiB buffer, and it is too small: it goes.
  AnswerBuffers::Lease m = MustLease(a, 7 * kMiB, &dropped);
  EXPECT_TRUE(m.fresh);
  EXPECT_EQ(dropped.size(), 1u);
  EXPECT_EQ(a.free_buffers(), 0u);
  EXPECT_LE(a.held(), 8 * kMiB);
}

TEST(AnswerBuffers, OneLeaseAloneMayExceedTheBudget) {
  AnswerBuffers a(4 * kMiB);
  Dropped dropped;
  AnswerBuffers::Lease l = MustLease(a, 10 * kMiB, &dropped);
  EXPECT_EQ(l.counted, 10 * kMiB);
  AnswerBuffers::Lease m;
  EXPECT_FALSE(a.TryLease(1, &m, &dropped));  // it is lent: everyone else waits
  // Returned, it is over the budget: dropped, not kept.
  a.Return(std::move(l), false, &dropped);
  EXPECT_EQ(dropped.size(), 1u);
  EXPECT_EQ(a.held(), 0u);
}

TEST(AnswerBuffers, AFailedDownloadKeepsNoBuffer) {
  AnswerBuffers a(16 * kMiB);
  Dropped dropped;
  AnswerBuffers::Lease l = MustLease(a, 2 * kMiB, &dropped);
  a.Return(std::move(l), /*discard=*/true, &dropped);
  EXPECT_EQ(dropped.size(), 1u);
  EXPECT_EQ(a.free_buffers(), 0u);
  EXPECT_EQ(a.held(), 0u);
}

}  // namespace
}  // namespace xet
