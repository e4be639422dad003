// Unit tests for BlockCutter: whatever it is told to predict (nothing, the true next
// chunks, or wrong ones), a file cut block by block gives exactly the sequential chunker's
// chunks (ChunkBoundaries) and hashes; true predictions are taken without scanning and
// counted as predicted bytes; wrong ones cost nothing but a scan; an emit error stops it.
#include "client/upload/block_cutter.h"

#include <gtest/gtest.h>

#include <unordered_map>
#include <vector>

#include "format/chunker.h"
#include "format/keyed_hash.h"
#include "support/test_support.h"

namespace xet {
namespace {

struct Cutting {
  std::vector<BlockChunk> chunks;  // offsets in the file
  size_t predicted_bytes = 0;
  uint64_t stats_predicted = 0;
};

// Cuts `data` in blocks of `block` new bytes after the carried open chunk, as the
// uploader does, asking `predict` about each chunk.
Cutting CutFile(std::span<const uint8_t> data, size_t block, const BlockCutter::PredictFn& predict,
                size_t helpers = 1) {
  BlockChunker chunker(helpers);
  TransferStats stats;
  BlockCutter cutter(chunker, &stats);
  cutter.Reset();
  Cutting out;
  size_t base = 0, fed = 0;
  while (true) {
    fed = std::min(data.size(), fed + block);
    const bool end = fed == data.size();
    const std::span<const uint8_t> view = data.subspan(base, fed - base);
    size_t at = base;  // file offset of the next chunk
    auto cut =
        cutter.CutBlock(view, end, predict, [&](std::span<const uint8_t> chunk, const Hash& hash) {
          EXPECT_EQ(chunk.data(), data.data() + at) << "not contiguous";
          EXPECT_EQ(hash, ChunkHash(chunk));
          out.chunks.push_back({at, chunk.size(), hash});
          at += chunk.size();
          return Status::Ok();
        });
    EXPECT_TRUE(cut.ok());
    EXPECT_EQ(base + cut->consumed, at);
    if (!end) {
      EXPECT_LT(view.size() - cut->consumed, kMaxChunkSize) << "open chunk too long";
    }
    out.predicted_bytes += cut->predicted_bytes;
    base += cut->consumed;
    if (end) break;
  }
  EXPECT_EQ(base, data.size());
  out.stats_predicted = stats.bytes_predicted.load();
  return out;
}

// The sequential chunker's chunk end offsets; the hashes are checked as chunks are emitted.
void ExpectSequentialCuts(const std::vector<BlockChunk>& got, std::span<const uint8_t> data) {
  std::vector<uint64_t> ends;
  for (const BlockChunk& c : got) ends.push_back(c.offset + c.size);
  EXPECT_EQ(ends, ChunkBoundaries(data));
}

TEST(BlockCutter, WithoutPredictionsMatchesTheSequentialChunker) {
  const std::vector<uint8_t> data = testing::RandomBytes((3 << 20) + 777, 21);
  for (size_t block : {size_t{1} << 20, size_t{300000}}) {
    const Cutting c = CutFile(data, block, [](const Hash&) { return std::nullopt; });
    ExpectSequentialCuts(c.chunks, data);
    EXPECT_EQ(c.predicted_bytes, 0u);
    EXPECT_EQ(c.stats_predicted, 0u);
  }
}

TEST(BlockCutter, TakesTruePredictions) {
  const std::vector<uint8_t> data = testing::RandomBytes((3 << 20) + 777, 22);
  // The true chunks, from a cut without predictions.
  const std::vector<BlockChunk> want =
      CutFile(data, 1 << 20, [](const Hash&) { return std::nullopt; }).chunks;
  // What followed each chunk "in an earlier upload": the true next chunk.
  std::unordered_map<Hash, ChunkInfo, HashHasher> following;
  for (size_t i = 0; i + 1 < want.size(); ++i) {
    following[want[i].hash] = {want[i + 1].hash, want[i + 1].size};
  }
  const Cutting c = CutFile(data, 1 << 20, [&](const Hash& h) -> std::optional<ChunkInfo> {
    auto it = following.find(h);
    if (it == following.end()) return std::nullopt;
    return it->second;
  });
  ExpectSequentialCuts(c.chunks, data);
  // Every chunk after the first is predicted, except the file's last one when it does not
  // end on a chunker cut (it ends where the file does).
  uint64_t want_predicted = 0;
  for (size_t i = 1; i < want.size(); ++i) want_predicted += want[i].size;
  const BlockChunk& last = want.back();
  if (!EndsOnChunkerCut(std::span<const uint8_t>(data).subspan(last.offset, last.size))) {
    want_predicted -= last.size;
  }
  EXPECT_EQ(c.predicted_bytes, want_predicted);
  EXPECT_EQ(c.stats_predicted, c.predicted_bytes);
}

TEST(BlockCutter, WrongPredictionsChangeNothing) {
  const std::vector<uint8_t> data = testing::RandomBytes((2 << 20) + 5, 23);
  const std::vector<uint64_t> ends = ChunkBoundaries(data);
  const Hash wrong = ChunkHash(std::vector<uint8_t>{1, 2, 3});
  for (size_t size :
       {size_t{64 << 10}, size_t{ends[1] - ends[0]}}) {  // a plausible size, the true size
    const Cutting c = CutFile(data, 1 << 20, [&](const Hash&) -> std::optional<ChunkInfo> {
      return ChunkInfo{wrong, size};
    });
    ExpectSequentialCuts(c.chunks, data);
    EXPECT_EQ(c.predicted_bytes, 0u);
  }
}

TEST(BlockCutter, StopsOnTheFirstEmitError) {
  const std::vector<uint8_t> data = testing::RandomBytes(1 << 20, 24);
  BlockChunker chunker(0);
  BlockCutter cutter(chunker, nullptr);
  int emitted = 0;
  auto cut = cutter.CutBlock(
      data, true, [](const Hash&) { return std::nullopt; },
      [&](std::span<const uint8_t>, const Hash&) {
        return ++emitted == 3 ? Status::IoError("full") : Status::Ok();
      });
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().code(), Status::Code::kIoError);
  EXPECT_EQ(emitted, 3);
}

}  // namespace
}  // namespace xet
