// Unit tests for BlockChunks: a block lists the chunks that start inside its span, in file
// order, so a chunk straddling two blocks is counted once.
#include "client/download/download_block.h"

#include <gtest/gtest.h>

#include <vector>

#include "format/keyed_hash.h"

namespace xet {
namespace {

// A distinct hash per label.
Hash H(uint8_t label) { return ChunkHash(std::vector<uint8_t>{label}); }

TEST(BlockChunks, ListsTheChunksStartingInTheSpan) {
  // Span [100, 199]. Term 0 starts at file offset 60: chunks at 60 (out), 100, 150;
  // term 1 starts at 190: chunks at 190 and 230 (out).
  DownloadBlock b;
  b.plan.span = {100, 199};
  b.plan.terms.resize(2);
  b.plan.terms[0].data_offset = 60;
  b.plan.terms[1].data_offset = 190;
  b.term_chunks = {{{H(1), 40}, {H(2), 50}, {H(3), 40}}, {{H(4), 40}, {H(5), 10}}};
  const std::vector<ChunkInfo> want = {{H(2), 50}, {H(3), 40}, {H(4), 40}};
  EXPECT_EQ(BlockChunks(b), want);
}

TEST(BlockChunks, EmptyWithoutChunks) {
  DownloadBlock b;
  b.plan.span = {0, 9};
  b.plan.terms.resize(1);
  b.term_chunks.resize(1);
  EXPECT_TRUE(BlockChunks(b).empty());
}

}  // namespace
}  // namespace xet
