// Unit tests for BlockReader: the views' fresh bytes are the source's bytes in order, in
// full blocks but the last; each view begins with the carry handed in; the source's end
// and errors are reported; a reader abandoned with a read in flight is safe to stop.
#include "client/upload/block_reader.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "support/test_support.h"

namespace xet {
namespace {

constexpr size_t kBlock = 4096;
constexpr size_t kCarry = 1500;

// Reads `data` in pieces of at most `piece` bytes (short reads), failing after `fail_at`.
class PieceSource final : public ByteSource {
 public:
  PieceSource(std::span<const uint8_t> data, size_t piece, size_t fail_at = SIZE_MAX)
      : data_(data), piece_(piece), fail_at_(fail_at) {}
  Result<size_t> Read(std::span<uint8_t> buf) override {
    if (pos_ >= fail_at_) return Status::IoError("disk on fire");
    const size_t n = std::min({buf.size(), piece_, data_.size() - pos_});
    std::copy_n(data_.data() + pos_, n, buf.data());
    pos_ += n;
    if (delay_.load()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return n;
  }
  void set_delay(bool d) { delay_.store(d); }

 private:
  std::span<const uint8_t> data_;
  size_t piece_;
  size_t fail_at_;
  size_t pos_ = 0;
  std::atomic<bool> delay_{false};  // set while a read ahead may run
};

TEST(BlockReader, ViewsHoldTheCarryThenTheSourceInFullBlocks) {
  BlockReader reader(kBlock, kCarry);
  for (size_t size : {size_t{0}, size_t{1}, kBlock - 1, kBlock, kBlock + 1, 5 * kBlock + 77}) {
    const auto data = testing::RandomBytes(size, size + 3);
    PieceSource source(data, 1000);  // short reads are topped up to a block
    reader.Start(&source);
    std::vector<uint8_t> got;
    std::span<const uint8_t> carry;
    size_t views = 0;
    for (;;) {
      const std::vector<uint8_t> carried(carry.begin(), carry.end());
      auto view = reader.Next(carry, (got.size() / kBlock) % 2 == 0);
      ASSERT_TRUE(view.ok()) << view.status().ToString();
      ++views;
      ASSERT_EQ(view->all.size(), carried.size() + view->fresh.size());
      EXPECT_TRUE(std::equal(carried.begin(), carried.end(), view->all.begin())) << size;
      EXPECT_EQ(view->fresh.data(), view->all.data() + carried.size());
      got.insert(got.end(), view->fresh.begin(), view->fresh.end());
      if (view->end) break;
      EXPECT_EQ(view->fresh.size(), kBlock) << "only the last block may be short";
      // Carry a varying tail, up to the limit.
      const size_t keep = std::min({kCarry, view->all.size(), (got.size() * 7) % 1601});
      carry = view->all.last(keep);
    }
    EXPECT_EQ(got, data) << size;
    EXPECT_EQ(views, size / kBlock + 1) << size;
  }
}

TEST(BlockReader, ReportsTheSourcesErrorInItsTurn) {
  const auto data = testing::RandomBytes(10 * kBlock, 4);
  PieceSource source(data, kBlock, 3 * kBlock);
  BlockReader reader(kBlock, kCarry);
  reader.Start(&source);
  for (int i = 0; i < 3; ++i) {
    auto view = reader.Next({}, true);
    ASSERT_TRUE(view.ok()) << i;
    EXPECT_TRUE(std::equal(view->fresh.begin(), view->fresh.end(), data.begin() + i * kBlock));
  }
  auto failed = reader.Next({}, true);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().ToString().find("disk on fire"), std::string::npos);
}

TEST(BlockReader, StopWaitsForTheReadInFlightBeforeTheSourceGoes) {
  const auto data = testing::RandomBytes(8 * kBlock, 5);
  BlockReader reader(kBlock, kCarry);
  {
    PieceSource source(data, kBlock);
    reader.Start(&source);
    ASSERT_TRUE(reader.Next({}, true).ok());  // a full block: the next is read ahead
    source.set_delay(true);
    ASSERT_TRUE(reader.Next({}, true).ok());  // ... and the one after, slowly
    reader.Stop();
  }  // the source is gone; nothing touches it (ASan would tell)
  PieceSource again(data, kBlock);
  reader.Start(&again);  // the reader is reusable
  auto view = reader.Next({}, true);
  ASSERT_TRUE(view.ok());
  EXPECT_TRUE(std::equal(view->fresh.begin(), view->fresh.end(), data.begin()));
  reader.Stop();  // a block is being read ahead from `again`, which goes before `reader`
}

}  // namespace
}  // namespace xet
