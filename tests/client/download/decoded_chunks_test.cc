#include "client/download/decoded_chunks.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace xet {
namespace {

Hash H(uint8_t b) {
  std::array<uint8_t, 32> a{};
  a[0] = b;
  return Hash::FromArray(a);
}

ChunkPtr Chunk(uint32_t size) { return NewDecodedChunk(size); }

TEST(DecodedChunks, DropsLeastRecentlyUsedBeyondTheBound) {
  DecodedChunks c(3 * 1000 + 3 * 128);  // three 1000-byte chunks with their bookkeeping
  c.Put({H(1), 0}, Chunk(1000));
  c.Put({H(1), 1}, Chunk(1000));
  c.Put({H(2), 0}, Chunk(1000));
  EXPECT_EQ(c.chunks(), 3u);
  ASSERT_NE(c.Get({H(1), 0}), nullptr);  // now the most recent
  ChunkPtr held = c.Get({H(1), 1}, /*touch=*/false);
  c.Put({H(2), 1}, Chunk(1000));  // drops (1, 1), the least recently used
  EXPECT_EQ(c.chunks(), 3u);
  EXPECT_EQ(c.Get({H(1), 1}), nullptr);
  EXPECT_NE(c.Get({H(1), 0}), nullptr);
  EXPECT_NE(c.Get({H(2), 1}), nullptr);
  EXPECT_EQ(held->size, 1000u);  // a holder keeps its chunk
  EXPECT_LE(c.bytes(), 3u * 1128u);
  c.Put({H(3), 0}, Chunk(5000));  // larger than the bound: nothing stays
  EXPECT_EQ(c.chunks(), 0u);
  EXPECT_EQ(c.bytes(), 0u);
}

TEST(DecodedChunks, ClaimsMakeReadersWait) {
  DecodedChunks c(1 << 20);
  const ChunkKey k{H(1), 7};
  EXPECT_TRUE(c.Claim(k));
  EXPECT_FALSE(c.Claim(k));  // claimed already
  ChunkPtr got;
  std::thread waiter([&] { got = c.Wait(k); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  c.Put(k, Chunk(10));
  waiter.join();
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->size, 10u);
  EXPECT_FALSE(c.Claim(k));  // held

  const ChunkKey k2{H(1), 8};
  {
    ChunkClaims claims(c);
    EXPECT_TRUE(claims.Claim(H(1), 8));
    EXPECT_TRUE(claims.Holds(H(1), 8));
    EXPECT_FALSE(c.Claim(k2));
  }  // abandoned
  EXPECT_EQ(c.Wait(k2), nullptr);
  EXPECT_TRUE(c.Claim(k2));
  c.Abandon(k2);
  EXPECT_EQ(c.Wait(k2), nullptr);
}

TEST(ChunkBufferPool, RecyclesBuffersWithinItsBound) {
  auto pool = std::make_shared<ChunkBufferPool>(3 * ChunkBufferPool::kClassBytes);
  const uint32_t k = ChunkBufferPool::kClassBytes;
  const uint8_t* first = nullptr;
  {
    auto c = pool->NewChunk(k + 1);
    EXPECT_EQ(c->size, k + 1);
    EXPECT_EQ(c->capacity, 2 * k);
    first = c->data;
  }
  EXPECT_EQ(pool->free_bytes(), 2u * k);
  {
    auto c = pool->NewChunk(2 * k);  // the same class: the same buffer
    EXPECT_EQ(c->data, first);
    EXPECT_EQ(pool->free_bytes(), 0u);
  }
  {
    auto c = pool->NewChunk(1);  // a smaller size may take a larger free buffer
    EXPECT_EQ(c->data, first);
    EXPECT_EQ(c->capacity, 2 * k);
  }
  {
    auto a = pool->NewChunk(2 * k);
    auto b = pool->NewChunk(2 * k);
  }  // 4 classes of free buffers exceed the bound: one is freed
  EXPECT_EQ(pool->free_bytes(), 2u * k);
  // Held bytes are counted by capacity (here the free buffer of two classes).
  DecodedChunks held(10 * k);
  held.Put({H(1), 0}, pool->NewChunk(1));
  EXPECT_EQ(held.bytes(), 2 * k + 128u);
}

TEST(ChunkBufferPool, CarvesNewBuffersFromItsArenaAndKeepsThemAll) {
  const uint32_t k = ChunkBufferPool::kClassBytes;
  // An arena of 4 classes; heap buffers: none kept free.
  auto pool = std::make_shared<ChunkBufferPool>(0, 4 * k);
  std::vector<std::shared_ptr<DecodedChunk>> held;
  held.push_back(pool->NewChunk(k));      // arena [0, k)
  held.push_back(pool->NewChunk(2 * k));  // arena [k, 3k)
  EXPECT_EQ(held[1]->data, held[0]->data + k);
  EXPECT_EQ(pool->arena_used_bytes(), 3u * k);
  held.push_back(pool->NewChunk(2 * k));  // does not fit the arena's last class: heap
  EXPECT_EQ(pool->arena_used_bytes(), 3u * k);
  const auto arena = reinterpret_cast<uintptr_t>(held[0]->data);
  const auto heap = reinterpret_cast<uintptr_t>(held[2]->data);
  EXPECT_TRUE(heap + held[2]->capacity <= arena || heap >= arena + 4 * k);
  held.push_back(pool->NewChunk(k));  // the arena's last class
  EXPECT_EQ(held[3]->data, held[0]->data + 3 * k);
  EXPECT_EQ(pool->arena_used_bytes(), 4u * k);
  // Writing every byte of every buffer is fine (ASan checks the unpoisoned extent).
  for (auto& c : held) std::memset(c->data, 0xab, c->capacity);
  const uint8_t* arena_two = held[1]->data;
  held.clear();
  // Arena buffers are all kept (a bound of 0 free bytes applies to heap buffers only).
  EXPECT_EQ(pool->free_bytes(), 4u * k);
  auto again = pool->NewChunk(2 * k);
  EXPECT_EQ(again->data, arena_two);
  EXPECT_EQ(pool->arena_used_bytes(), 4u * k);
}

TEST(ChunkBufferPool, WithoutAnArenaEveryBufferComesFromTheHeap) {
  auto pool = std::make_shared<ChunkBufferPool>(0);
  auto c = pool->NewChunk(100);
  EXPECT_EQ(c->capacity, ChunkBufferPool::kClassBytes);
  EXPECT_EQ(pool->arena_used_bytes(), 0u);
  c.reset();
  EXPECT_EQ(pool->free_bytes(), 0u);  // bound 0: freed at once
}

}  // namespace
}  // namespace xet
