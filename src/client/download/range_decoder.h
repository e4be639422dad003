// RangeDecoder: decodes the chunks of one fetched xorb range, one chunk at a time, and
// hands every term of a block plan that the range serves the bytes it needs.
//
// For each chunk (in order): decompress, optionally hash (and compare with the chunk a
// cache entry recorded), then give each term whose chunks include it the part of the
// chunk that falls inside the term's written window ([skip, skip + take) of the term's
// data). Finish() checks that each term's chunks held exactly its unpacked_length bytes.
// Memory: one decoded chunk (kXorbMaxChunkSize) and per-term counters, reused from range
// to range. Not thread-safe: one per worker.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "client/download/block_planner.h"
#include "client/download/chunk_records.h"
#include "common/status.h"
#include "format/compression.h"
#include "format/merkle.h"

namespace xet {

// Where a range's decoded term bytes go (the part file, or a streamed term's buffer).
class TermSink {
 public:
  virtual ~TermSink() = default;
  // Term `term` (an index into the plan's terms) is served by the range being started.
  virtual void Prepare(uint32_t term, const TermPlacement& p) = 0;
  // Bytes [at, at + bytes.size()) of the term's written window (offset 0 is the term's
  // byte `skip`). Called in increasing `at` order per term.
  virtual Status Put(uint32_t term, const TermPlacement& p, uint64_t at,
                     std::span<const uint8_t> bytes) = 0;
};

class RangeDecoder {
 public:
  RangeDecoder() = default;
  RangeDecoder(const RangeDecoder&) = delete;
  RangeDecoder& operator=(const RangeDecoder&) = delete;

  // Starts a range of `num_chunks` chunks serving the terms `ref` lists of `plan` (both
  // must outlive the range). With `expected` (a cache entry's chunk list), the chunk count
  // and every chunk's hash and size are checked; chunks are hashed when `hash_chunks` or
  // `expected`. Calls sink.Prepare for each term. Corruption when a term lies outside the
  // range or `expected` has another number of chunks.
  Status Begin(const BlockPlan& plan, const RangeRef& ref, uint32_t num_chunks,
               const std::vector<ChunkInfo>* expected, bool hash_chunks, TermSink& sink);

  // Chunk `i` of the range (chunks come in order, 0 first) from its checked record and
  // payload. Corruption when it does not decompress or differs from `expected`; a sink's
  // error is returned as is.
  Status Chunk(uint32_t i, const ChunkRecord& r, std::span<const uint8_t> payload);

  // After the range's last chunk: Corruption unless every term's chunks held exactly its
  // unpacked_length bytes.
  Status Finish() const;

  // The (hash, size) of the range's chunks decoded so far, when they are hashed.
  const std::vector<ChunkInfo>& infos() const { return infos_; }

 private:
  const BlockPlan* plan_ = nullptr;
  const RangeRef* ref_ = nullptr;
  TermSink* sink_ = nullptr;
  const std::vector<ChunkInfo>* expected_ = nullptr;
  bool hash_ = false;
  ChunkCodec codec_;
  std::vector<uint8_t> chunk_ = std::vector<uint8_t>(kXorbMaxChunkSize);
  std::vector<ChunkInfo> infos_;
  std::vector<uint32_t> order_;   // positions in ref_->terms, by first chunk
  std::vector<uint64_t> seen_;    // per position: bytes of the term's chunks decoded so far
  std::vector<uint32_t> active_;  // positions whose chunks are being decoded
  size_t next_term_ = 0;          // in `order_`: the first term not yet active
};

}  // namespace xet
