// BlockChunker: content-defined chunking and chunk hashing of one in-memory block of a
// stream, split across several threads, with exactly the boundaries and hashes of the
// sequential Chunker + ChunkHash.
//
// How: the block is cut into equal segments. The calling thread chunks the first segment
// from the block's start; each helper thread chunks a later segment as if a chunk began at
// the segment's start, hashing the chunks it finds. Because the chunker's state after a
// cut depends only on the cut's position, the true boundaries join a helper's boundaries
// at the first position both contain; from there the helper's chunks and hashes are the
// true ones. Where a segment never joins (data with no content-defined cuts, such as long
// runs of one byte value, whose cuts are forced at the maximum size), the calling thread
// chunks on sequentially: the result is always correct, only slower.
//
// Not thread-safe: one caller drives it; its helper threads live as long as the object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "common/side_thread.h"
#include "format/hash.h"

namespace xet {

struct BlockChunk {
  size_t offset = 0;  // within the block
  size_t size = 0;
  Hash hash;  // ChunkHash of the chunk's bytes
};

class BlockChunker {
 public:
  // A block is split into at most one segment per thread, each at least this long (so a
  // block under twice this size is chunked by the calling thread alone).
  static constexpr size_t kMinSegmentBytes = 1 << 20;

  // `helpers`: extra threads (0 = the calling thread does everything).
  explicit BlockChunker(size_t helpers);
  ~BlockChunker();
  BlockChunker(const BlockChunker&) = delete;
  BlockChunker& operator=(const BlockChunker&) = delete;

  // Requires: block[0] starts a chunk (the start of a stream, or the first byte after
  // the previous call's last chunk). Replaces *out with the block's complete chunks, in
  // order and contiguous from offset 0. When `end_of_stream`, they cover the whole block
  // (the last one may be shorter than the minimum chunk size); otherwise the bytes after
  // the last chunk (fewer than the maximum chunk size) form the still-open chunk, which the
  // caller passes again at the front of the next block.
  void Chunk(std::span<const uint8_t> block, bool end_of_stream, std::vector<BlockChunk>* out);

 private:
  struct Segment;

  std::vector<std::unique_ptr<SideThread>> helpers_;
  std::vector<Segment> segments_;
};

}  // namespace xet
