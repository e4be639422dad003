#include "client/upload/block_chunker.h"

#include <algorithm>

#include "format/chunker.h"
#include "format/keyed_hash.h"

namespace xet {

// What one thread found scanning from `cuts[0]` as if a chunk began there: every cut up
// to the first one at or after `stop` (or up to the block's open tail), and the hash of
// each chunk between consecutive cuts.
struct BlockChunker::Segment {
  std::vector<size_t> cuts;  // ascending; cuts[0] is the scan's start
  std::vector<Hash> hashes;  // hashes[i]: chunk [cuts[i], cuts[i + 1])

  void Scan(std::span<const uint8_t> block, size_t begin, size_t stop) {
    cuts.assign(1, begin);
    hashes.clear();
    Chunker chunker;
    size_t pos = begin;
    while (pos < block.size() && pos < stop) {
      const size_t n = chunker.NextBoundary(block.subspan(pos));
      if (n == 0) break;
      hashes.push_back(ChunkHash(block.subspan(pos, n)));
      pos += n;
      cuts.push_back(pos);
    }
  }
};

BlockChunker::BlockChunker(size_t helpers) : segments_(helpers + 1) {
  for (size_t i = 0; i < helpers; ++i) helpers_.push_back(std::make_unique<SideThread>());
}

BlockChunker::~BlockChunker() = default;

void BlockChunker::Chunk(std::span<const uint8_t> block, bool end_of_stream,
                         std::vector<BlockChunk>* out) {
  out->clear();
  const size_t len = block.size();
  const size_t parts = std::clamp<size_t>(len / kMinSegmentBytes, 1, segments_.size());
  // Equal segments. Shortening the calling thread's (which also reads the blocks and
  // consumes the chunks) measured slower in the uploader (docs/bench-log/client.md).
  const size_t step = len / parts;
  auto start_of = [&](size_t k) { return k * step; };
  auto stop_of = [&](size_t k) { return k + 1 < parts ? start_of(k + 1) : len; };

  for (size_t k = 1; k < parts; ++k) {
    helpers_[k - 1]->Start(
        [this, block, k, b = start_of(k), s = stop_of(k)] { segments_[k].Scan(block, b, s); });
  }
  segments_[0].Scan(block, 0, stop_of(0));
  for (size_t k = 1; k < parts; ++k) helpers_[k - 1]->Wait();

  // Takes segment `s`'s chunks from its cut `i` on (a true cut); returns the last cut.
  auto adopt = [&](const Segment& s, size_t i) {
    for (; i + 1 < s.cuts.size(); ++i) {
      out->push_back({s.cuts[i], s.cuts[i + 1] - s.cuts[i], s.hashes[i]});
    }
    return s.cuts.back();
  };
  size_t pos = adopt(segments_[0], 0);  // a true cut from here on
  size_t k = 1;
  Chunker chunker;  // fresh at every true cut: NextBoundary resets it after each cut
  while (pos < len) {
    while (k < parts && segments_[k].cuts.back() < pos) ++k;  // passed without joining
    if (k < parts) {
      const std::vector<size_t>& cuts = segments_[k].cuts;
      auto it = std::lower_bound(cuts.begin(), cuts.end(), pos);
      if (it != cuts.end() && *it == pos) {
        pos = adopt(segments_[k], static_cast<size_t>(it - cuts.begin()));
        ++k;
        continue;
      }
    }
    const size_t n = chunker.NextBoundary(block.subspan(pos));
    if (n == 0) break;
    out->push_back({pos, n, ChunkHash(block.subspan(pos, n))});
    pos += n;
  }
  if (end_of_stream && pos < len) {
    out->push_back({pos, len - pos, ChunkHash(block.subspan(pos))});
  }
}

}  // namespace xet
