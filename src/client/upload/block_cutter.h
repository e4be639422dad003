// BlockCutter: cuts the blocks of one file into chunks with exactly the spec's boundaries,
// predicting chunks where it can instead of scanning for their cuts.
//
// A predicted chunk (the one the dedup index says followed the last emitted chunk in an
// earlier upload) starts on a true boundary, and if its bytes hash to the prediction and
// end on a chunker cut (EndsOnChunkerCut) it is exactly the chunk scanning would find: an
// unchanged run is only hashed. On a miss one chunk is scanned; if the index knows what
// followed that chunk, predicting resumes, otherwise (new data) the rest of the block is
// chunked across the BlockChunker's helpers. Not thread-safe: one per upload worker.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "client/transfer_stats.h"
#include "client/upload/block_chunker.h"
#include "common/result.h"
#include "format/hash.h"
#include "format/merkle.h"

namespace xet {

class BlockCutter {
 public:
  // The chunk expected after the chunk `hash`, if any.
  using PredictFn = std::function<std::optional<ChunkInfo>(const Hash& hash)>;
  // Takes the next chunk of the file (bytes valid during the call) and its ChunkHash.
  using EmitFn = std::function<Status(std::span<const uint8_t> data, const Hash& hash)>;

  // `chunker` must outlive the cutter; `stats` (may be null) counts bytes_predicted.
  BlockCutter(BlockChunker& chunker, TransferStats* stats) : chunker_(chunker), stats_(stats) {}
  BlockCutter(const BlockCutter&) = delete;
  BlockCutter& operator=(const BlockCutter&) = delete;

  // Starts a file: nothing is predicted.
  void Reset() { predicted_.reset(); }

  struct Cut {
    size_t consumed = 0;         // bytes of the block emitted as chunks
    size_t predicted_bytes = 0;  // of which the predicted chunks'
  };
  // Emits, in order, the chunks of `block` (which starts on a chunk boundary), asking
  // `predict` about each chunk before emitting it. Unless `end` (the file's last block),
  // the bytes of a chunk that may run past the block are left unconsumed: the caller
  // passes them again at the front of the next block. With `end`, every byte is emitted.
  // Returns the first error of `emit`.
  Result<Cut> CutBlock(std::span<const uint8_t> block, bool end, const PredictFn& predict,
                       const EmitFn& emit);

 private:
  BlockChunker& chunker_;
  TransferStats* const stats_;
  std::optional<ChunkInfo> predicted_;  // the chunk expected next
  std::vector<BlockChunk> block_chunks_;
};

}  // namespace xet
