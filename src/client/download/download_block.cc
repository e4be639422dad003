#include "client/download/download_block.h"

namespace xet {

std::vector<ChunkInfo> BlockChunks(const DownloadBlock& b) {
  std::vector<ChunkInfo> out;
  for (size_t ti = 0; ti < b.plan.terms.size(); ++ti) {
    const TermPlacement& p = b.plan.terms[ti];
    uint64_t pos = p.data_offset;
    for (const ChunkInfo& c : b.term_chunks[ti]) {
      if (pos >= b.plan.span.first && pos <= b.plan.span.last) out.push_back(c);
      pos += c.size;
    }
  }
  return out;
}

}  // namespace xet
