// Download planning: splitting a file into reconstruction blocks, and laying out one
// /v2/reconstructions answer (for bytes [first, last] of a file) as the fetch work and the
// writes it implies. Pure: no I/O, no threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "client/cas/cas_client.h"
#include "common/result.h"

namespace xet {

// Bytes [first, last] (inclusive) of a file: one planning block.
struct ByteSpan {
  uint64_t first = 0, last = 0;
  uint64_t size() const { return last - first + 1; }
  friend bool operator==(const ByteSpan&, const ByteSpan&) = default;
};

// Cuts [first, last] into consecutive spans of `block_bytes` (the last one shorter), aligned
// to multiples of block_bytes from `first`. block_bytes 0 is treated as 1.
std::vector<ByteSpan> SplitBlocks(uint64_t first, uint64_t last, uint64_t block_bytes);

// Where a run of a xorb's chunks is served from: range `range` of fetch entry `entry`.
struct RangeAt {
  uint32_t entry = 0, range = 0;
};
// The first fetch entry of `entries` (one xorb's, ranges ascending) with a range holding all
// of chunks [chunk_start, chunk_end), or nullopt.
std::optional<RangeAt> FindCoveringRange(const std::vector<FetchEntry>& entries,
                                         uint32_t chunk_start, uint32_t chunk_end);

// Where one term of a block's reconstruction comes from and where its bytes go.
struct TermPlacement {
  uint32_t range_ref = 0;     // index into BlockPlan::ranges of the range that serves it
  uint32_t chunk_offset = 0;  // first chunk of the term, relative to the range's first chunk
  uint32_t num_chunks = 0;
  uint64_t unpacked_length = 0;  // of all the term's chunks (checked when decoded)
  uint64_t skip = 0;             // bytes of the term's data before the first byte written
  uint64_t take = 0;             // bytes written (0: the term lies wholly outside the block)
  uint64_t out_offset = 0;       // of the first written byte, relative to the block's first
  uint64_t data_offset = 0;      // of the term's first byte in the file (chunk positions)
};

// One fetch range (xorb x, fetch entry e, range r of it) with the terms it serves.
struct RangeRef {
  uint32_t xorb = 0, entry = 0, range = 0;
  std::vector<uint32_t> terms;  // ascending term indices
};

// One FetchRanges call: ranges [first_range, last_range] of one fetch entry. `refs` are the
// matching RangeRef indices, in range order.
struct FetchTask {
  uint32_t xorb = 0, entry = 0;
  uint32_t first_range = 0, last_range = 0;
  std::vector<uint32_t> refs;
  uint64_t bytes = 0;  // compressed bytes requested
};

struct BlockPlan {
  ByteSpan span;
  std::vector<TermPlacement> terms;
  std::vector<RangeRef> ranges;
  std::vector<FetchTask> tasks;
};

// Lays out `recon` (the answer for bytes `span` of a file): maps each term to the one fetch
// range containing its chunks, computes what part of each term lands where in the span,
// and groups the ranges in use into FetchRanges calls of at most `max_task_bytes`
// compressed bytes (a single larger range gets a call of its own). Corruption when the
// answer is inconsistent: a term whose xorb has no fetch entry or whose chunks no single
// range covers, an offset_into_first_range beyond the first term, byte ranges that are
// empty or descending, or terms that do not cover the span.
Result<BlockPlan> PlanBlock(const Reconstruction& recon, const ByteSpan& span,
                            uint64_t max_task_bytes);

}  // namespace xet
