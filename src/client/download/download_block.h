// DownloadBlock: one planning block of a download while it is in flight: its
// reconstruction, its plan, the fetch tasks still to run, and what the fetch workers
// leave for the caller (the chunks of each term; for streams, each term's bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "client/cas/cas_client.h"
#include "client/download/block_planner.h"
#include "common/uninitialized_buffer.h"
#include "format/merkle.h"

namespace xet {

struct DownloadBlock {
  uint64_t index = 0;
  Reconstruction recon;
  BlockPlan plan;
  size_t tasks_left = 0;  // guarded by the owning DownloadTransfer's lock
  // Whole files and verified streams: the chunks of each term, from its decoded range.
  std::vector<std::vector<ChunkInfo>> term_chunks;
  // Streaming: the written part of each term, and whether it is ready.
  std::vector<UninitializedBytes> term_bytes;
  std::vector<uint8_t> term_ready;
};

// The chunks of `block` that start inside its span, in file order (a chunk straddling two
// blocks counts once, for the block it starts in). Requires term_chunks filled.
std::vector<ChunkInfo> BlockChunks(const DownloadBlock& block);

}  // namespace xet
