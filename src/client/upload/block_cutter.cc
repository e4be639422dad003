#include "client/upload/block_cutter.h"

#include "format/chunker.h"
#include "format/keyed_hash.h"

namespace xet {

Result<BlockCutter::Cut> BlockCutter::CutBlock(std::span<const uint8_t> block, bool end,
                                               const PredictFn& predict, const EmitFn& emit) {
  auto emit_chunk = [&](std::span<const uint8_t> data, const Hash& hash) {
    predicted_ = predict(hash);
    return emit(data, hash);
  };
  const uint8_t* const buf = block.data();
  const size_t len = block.size();
  Cut cut;
  bool scan_rest = false;
  while (cut.consumed < len) {
    const std::span<const uint8_t> rest(buf + cut.consumed, len - cut.consumed);
    if (predicted_ && predicted_->size >= kMinChunkSize && predicted_->size <= kMaxChunkSize) {
      const ChunkInfo next = *predicted_;
      if (next.size > rest.size() && !end) break;
      if (next.size <= rest.size()) {
        const std::span<const uint8_t> data = rest.first(next.size);
        if (EndsOnChunkerCut(data) && ChunkHash(data) == next.hash) {
          XET_RETURN_IF_ERROR(emit_chunk(data, next.hash));  // predicts the chunk after it
          cut.consumed += next.size;
          cut.predicted_bytes += next.size;
          if (stats_) stats_->bytes_predicted += next.size;
          continue;
        }
      }
    }
    Chunker one;
    size_t n = one.NextBoundary(rest);
    if (n == 0 && !end) break;
    if (n == 0) n = rest.size();  // the file's last chunk
    XET_RETURN_IF_ERROR(emit_chunk(rest.first(n), ChunkHash(rest.first(n))));
    cut.consumed += n;
    if (!predicted_) {
      scan_rest = true;
      break;
    }
  }
  if (scan_rest && cut.consumed < len) {
    const size_t from = cut.consumed;
    chunker_.Chunk({buf + from, len - from}, end, &block_chunks_);
    for (const BlockChunk& c : block_chunks_) {
      XET_RETURN_IF_ERROR(emit_chunk({buf + from + c.offset, c.size}, c.hash));
      cut.consumed = from + c.offset + c.size;
    }
  }
  return cut;
}

}  // namespace xet
