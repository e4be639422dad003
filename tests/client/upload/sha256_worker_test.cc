// Unit tests for Sha256Worker: the digest of blocks handed over (or digested here) in any
// mix equals the one-shot SHA-256 of their concatenation.
#include "client/upload/sha256_worker.h"

#include <gtest/gtest.h>

#include <vector>

#include "support/test_support.h"

namespace xet {
namespace {

TEST(Sha256Worker, BackgroundAndInlineBlocksDigestInOrder) {
  const std::vector<uint8_t> data = testing::RandomBytes(3 << 20, 31);
  Sha256Worker worker;
  const size_t cuts[] = {0, 1, 4096, 1 << 20, (2 << 20) + 7, data.size()};
  for (size_t i = 0; i + 1 < std::size(cuts); ++i) {
    const std::span<const uint8_t> block(data.data() + cuts[i], cuts[i + 1] - cuts[i]);
    if (i % 2 == 0) {
      worker.Update(block);
      worker.Wait();
    } else {
      worker.UpdateHere(block);
    }
  }
  EXPECT_EQ(worker.Finish(), Sha256Of(data));
}

TEST(Sha256Worker, FinishStartsOverAndResetDropsAPartialStream) {
  const std::vector<uint8_t> a = testing::RandomBytes(100000, 1);
  const std::vector<uint8_t> b = testing::RandomBytes(5000, 2);
  Sha256Worker worker;
  worker.Update(a);
  EXPECT_EQ(worker.Finish(), Sha256Of(a));  // Finish waits for the pending block
  worker.Update(a);
  worker.Reset();  // abandoned halfway
  worker.Update(b);
  EXPECT_EQ(worker.Finish(), Sha256Of(b));
  EXPECT_EQ(worker.Finish(), Sha256Of({}));
}

TEST(Sha256Worker, StartsItsThreadOnlyForABackgroundBlock) {
  const std::vector<uint8_t> a = testing::RandomBytes(70000, 4);
  Sha256Worker worker;
  worker.UpdateHere(a);
  worker.Wait();
  EXPECT_EQ(worker.Finish(), Sha256Of(a));
  EXPECT_FALSE(worker.threaded());  // inline digests and waits cost no thread
  worker.Update(a);
  EXPECT_TRUE(worker.threaded());
  EXPECT_EQ(worker.Finish(), Sha256Of(a));
}

TEST(Sha256Worker, DestroyedWithABlockPending) {
  const std::vector<uint8_t> a = testing::RandomBytes(1 << 20, 3);
  {
    Sha256Worker worker;
    worker.Update(a);
  }  // joins without hanging or touching freed memory
  SUCCEED();
}

}  // namespace
}  // namespace xet
