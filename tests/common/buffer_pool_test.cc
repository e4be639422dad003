// Unit tests for BufferPool.
#include "common/buffer_pool.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "common/uninitialized_buffer.h"

namespace xet {
namespace {

TEST(BufferPool, FreshBuffersHaveTheAskedCapacityAndAreEmpty) {
  BufferPool pool(2);
  std::vector<uint8_t> b = pool.Take(1 << 20);
  EXPECT_TRUE(b.empty());
  EXPECT_GE(b.capacity(), size_t{1} << 20);
  EXPECT_EQ(pool.pooled(), 0u);
}

TEST(BufferPool, GivenBuffersComeBackClearedWithTheirStorage) {
  BufferPool pool(2);
  std::vector<uint8_t> b = pool.Take(4096);
  b.assign(3000, 0x5A);
  const uint8_t* storage = b.data();
  pool.Give(std::move(b));
  EXPECT_EQ(pool.pooled(), 1u);
  std::vector<uint8_t> again = pool.Take(4096);
  EXPECT_TRUE(again.empty());
  EXPECT_EQ(again.data(), storage);
  EXPECT_EQ(pool.pooled(), 0u);
}

TEST(BufferPool, KeepsAtMostItsBoundAndIgnoresEmptyBuffers) {
  BufferPool pool(2);
  for (int i = 0; i < 5; ++i) pool.Give(pool.Take(1024 + i));
  EXPECT_EQ(pool.pooled(), 1u);  // each Give returned the buffer the Take before had taken
  pool.Give(std::vector<uint8_t>(100));
  pool.Give(std::vector<uint8_t>(100));
  pool.Give(std::vector<uint8_t>(100));
  EXPECT_EQ(pool.pooled(), 2u);
  pool.Give(std::vector<uint8_t>());
  EXPECT_EQ(pool.pooled(), 2u);
}

TEST(BufferPool, APooledBufferSmallerThanAskedIsGrown) {
  BufferPool pool(1);
  pool.Give(std::vector<uint8_t>(16));
  std::vector<uint8_t> b = pool.Take(1 << 16);
  EXPECT_GE(b.capacity(), size_t{1} << 16);
  EXPECT_TRUE(b.empty());
}

TEST(BufferPool, TakePooledNeverAllocatesAndPooledBytesAccountsEveryBuffer) {
  StringBufferPool pool(2);
  EXPECT_EQ(pool.TakePooled().capacity(), std::string().capacity());  // nothing pooled
  std::string a;
  a.reserve(3000);
  std::string b;
  b.reserve(5000);
  const size_t a_capacity = a.capacity(), b_capacity = b.capacity();
  pool.Give(std::move(a));
  pool.Give(std::move(b));
  std::string c;
  c.reserve(7000);
  pool.Give(std::move(c));  // over the bound: freed, not counted
  EXPECT_EQ(pool.pooled(), 2u);
  EXPECT_EQ(pool.pooled_bytes(), a_capacity + b_capacity);
  std::string taken = pool.TakePooled();
  EXPECT_TRUE(taken.capacity() == a_capacity || taken.capacity() == b_capacity);
  EXPECT_EQ(pool.pooled_bytes(), a_capacity + b_capacity - taken.capacity());
  pool.Clear();
  EXPECT_EQ(pool.pooled(), 0u);
  EXPECT_EQ(pool.pooled_bytes(), 0u);
  EXPECT_EQ(pool.TakePooled().capacity(), std::string().capacity());
}

TEST(BufferPool, ThreadsShareItSafely) {
  BufferPool pool(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&pool, t] {
      for (int i = 0; i < 1000; ++i) {
        std::vector<uint8_t> b = pool.Take(4096);
        b.push_back(static_cast<uint8_t>(t));
        pool.Give(std::move(b));
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_LE(pool.pooled(), 4u);
  EXPECT_GE(pool.pooled(), 1u);
}

// UninitializedBytes leaves new bytes alone on resize (not observable without reading
// indeterminate values); what it must keep: explicit values are still written, existing
// bytes survive growth, and a pool of them hands back the same storage.
TEST(UninitializedBytes, KeepsValuesItIsGivenAndWorksInAPool) {
  UninitializedBytes filled(10, 7);
  EXPECT_EQ(filled, UninitializedBytes(10, 7));
  filled.resize(4);
  filled.resize(1 << 20);  // grows in place or moves: the first 4 bytes stay 7
  for (int i = 0; i < 4; ++i) EXPECT_EQ(filled[i], 7) << i;

  BasicBufferPool<UninitializedBytes> pool(1);
  UninitializedBytes b = pool.Take(1 << 20);
  b.resize(1 << 20);
  b[0] = 42;
  const uint8_t* storage = b.data();
  pool.Give(std::move(b));
  UninitializedBytes again = pool.Take(1 << 20);
  EXPECT_EQ(again.data(), storage);
  EXPECT_TRUE(again.empty());
}

}  // namespace
}  // namespace xet
