// Unit tests for BlockChunker: with any number of helper threads, its chunks and hashes
// equal the sequential chunker's (ChunkBoundaries) and ChunkHash of each chunk, for data
// whose segments rejoin the true boundaries (random bytes), data whose segments never do
// (one repeated byte: every cut is forced at the maximum size, at a phase set by the
// segment's start), a segment that starts exactly on a true cut, and a stream fed in
// blocks with the open chunk carried over.
#include "client/upload/block_chunker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "format/chunker.h"
#include "format/keyed_hash.h"
#include "support/test_support.h"

namespace xet {
namespace {

// The sequential reference for a whole stream.
std::vector<BlockChunk> Reference(std::span<const uint8_t> data) {
  std::vector<BlockChunk> out;
  size_t start = 0;
  for (uint64_t end : ChunkBoundaries(data)) {
    out.push_back({start, end - start, ChunkHash(data.subspan(start, end - start))});
    start = end;
  }
  return out;
}

// Feeds `data` to a BlockChunker in blocks of `block` new bytes (after the carried open
// chunk), as the uploader does; returns the chunks with stream offsets.
std::vector<BlockChunk> Streamed(std::span<const uint8_t> data, size_t block, size_t helpers) {
  BlockChunker chunker(helpers);
  std::vector<BlockChunk> all, part;
  size_t base = 0;  // stream offset of the current block's first byte
  size_t fed = 0;
  while (true) {
    fed = std::min(data.size(), fed + block);
    const bool end = fed == data.size();
    chunker.Chunk(data.subspan(base, fed - base), end, &part);
    size_t consumed = 0;
    for (const BlockChunk& c : part) {
      EXPECT_EQ(c.offset, consumed) << "chunks must be contiguous from the block's start";
      all.push_back({base + c.offset, c.size, c.hash});
      consumed = c.offset + c.size;
    }
    if (!end) {
      EXPECT_LT(fed - base - consumed, kMaxChunkSize) << "open chunk too long";
    }
    base += consumed;
    if (end) break;
  }
  EXPECT_EQ(base, data.size());
  return all;
}

void ExpectSame(const std::vector<BlockChunk>& got, const std::vector<BlockChunk>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].offset, want[i].offset) << "chunk " << i;
    EXPECT_EQ(got[i].size, want[i].size) << "chunk " << i;
    EXPECT_EQ(got[i].hash, want[i].hash) << "chunk " << i;
  }
}

TEST(BlockChunker, WholeBlocksMatchTheSequentialChunker) {
  const std::vector<uint8_t> data = testing::RandomBytes((9 << 20) + 4321, 7);
  for (size_t helpers : {0, 1, 3}) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{5000}, size_t{(2 << 20) + 17}, data.size()}) {
      SCOPED_TRACE(::testing::Message() << "helpers " << helpers << ", bytes " << n);
      const std::span<const uint8_t> block(data.data(), n);
      BlockChunker chunker(helpers);
      std::vector<BlockChunk> got;
      chunker.Chunk(block, /*end_of_stream=*/true, &got);
      ExpectSame(got, Reference(block));
    }
  }
}

TEST(BlockChunker, StreamedBlocksMatchTheSequentialChunker) {
  const std::vector<uint8_t> data = testing::RandomBytes((21 << 20) + 99, 8);
  const std::vector<BlockChunk> want = Reference(data);
  for (size_t helpers : {0, 1, 2}) {
    for (size_t block : {size_t{3 << 20}, size_t{8 << 20}, size_t{(4 << 20) + 12345}}) {
      SCOPED_TRACE(::testing::Message() << "helpers " << helpers << ", block " << block);
      ExpectSame(Streamed(data, block, helpers), want);
    }
  }
}

TEST(BlockChunker, SegmentsThatNeverRejoinFallBackToSequentialChunking) {
  // One byte value: no content-defined cut, so every cut is forced kMaxChunkSize after the
  // previous one; a segment starting off that grid never meets a true cut.
  std::vector<uint8_t> data((6 << 20) + 1000, 0x5a);
  ASSERT_NE((data.size() / 2) % kMaxChunkSize, 0u);
  BlockChunker chunker(1);
  std::vector<BlockChunk> got;
  chunker.Chunk(data, true, &got);
  ExpectSame(got, Reference(data));
  ExpectSame(Streamed(data, 5 << 20, 1), Reference(data));
}

TEST(BlockChunker, SegmentStartingOnATrueCutIsTakenWhole) {
  // 32 forced cuts of kMaxChunkSize: the second segment starts exactly on the 16th.
  std::vector<uint8_t> data(32 * kMaxChunkSize, 0);
  ASSERT_EQ((data.size() / 2) % kMaxChunkSize, 0u);
  BlockChunker chunker(1);
  std::vector<BlockChunk> got;
  chunker.Chunk(data, false, &got);
  std::vector<BlockChunk> want = Reference(data);
  ExpectSame(got, want);  // the last cut is the block's end: nothing left open
}

TEST(BlockChunker, MixedDataRejoinsAfterAnUnchunkableRun) {
  // Random bytes with a 3 MiB run of zeros across the segment boundary.
  std::vector<uint8_t> data = testing::RandomBytes(12 << 20, 9);
  std::fill(data.begin() + (4 << 20), data.begin() + (7 << 20), 0);
  for (size_t helpers : {1, 3}) {
    BlockChunker chunker(helpers);
    std::vector<BlockChunk> got;
    chunker.Chunk(data, true, &got);
    ExpectSame(got, Reference(data));
  }
}

}  // namespace
}  // namespace xet
