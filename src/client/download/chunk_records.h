// Chunk records of a fetched xorb range: the framing checks a download applies to bytes
// from the server or the chunk cache before anything is decompressed.
//
// A range of `num_chunks` chunks is exactly `num_chunks` records (an 8-byte header, then
// the payload), each header of the current version with a known compression scheme, an
// uncompressed size in (0, kXorbMaxChunkSize], and for stored (uncompressed) chunks equal
// sizes. ParseChunkRecords checks a range held whole; ChunkRecordStream checks one that
// arrives in pieces and hands out each record once complete. Pure: no I/O, no threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "common/result.h"
#include "format/compression.h"
#include "format/xorb.h"

namespace xet {

// One checked record: where its payload starts (in the bytes it was parsed from) and its
// header's fields.
struct ChunkRecord {
  size_t payload = 0;
  uint32_t csize = 0, usize = 0;
  uint8_t scheme = 0;
};

// Checks that exactly `num_chunks` well-formed records fill `bytes` and lists them in
// `records` (cleared first). Corruption naming the record and offset otherwise.
Status ParseChunkRecords(std::span<const uint8_t> bytes, uint32_t num_chunks,
                         std::vector<ChunkRecord>* records);

// The uncompressed bytes of chunk `index`'s checked record `r`: `payload` itself for a
// stored chunk, else its payload decompressed into `scratch` (at least r.usize bytes).
// Corruption naming the chunk when the payload does not decode to exactly r.usize bytes.
Result<std::span<const uint8_t>> DecodeChunkRecord(ChunkCodec& codec, uint32_t index,
                                                   const ChunkRecord& r,
                                                   std::span<const uint8_t> payload,
                                                   std::span<uint8_t> scratch);

// Reassembles the records of a range of known length from pieces, in order. A record
// split across pieces is copied (one record at most, its payload bounded by
// kMaxPayload); a whole one is handed out in place.
class ChunkRecordStream {
 public:
  // Largest record payload accepted (a stored chunk is at most kXorbMaxChunkSize; an LZ4
  // frame of one is barely larger).
  static constexpr size_t kMaxPayload = 2 * kXorbMaxChunkSize;

  // Gets the chunk's index in the range, its record (payload offset relative to the
  // record's start) and the payload bytes, valid during the call.
  using RecordFn =
      std::function<Status(uint32_t, const ChunkRecord&, std::span<const uint8_t> payload)>;

  // Starts a range of `num_chunks` chunks in `range_bytes` bytes.
  void Reset(uint32_t num_chunks, uint64_t range_bytes);

  // Consumes the next piece: calls `on_record` for each record it completes, in order, and
  // returns its first error. Corruption when the range grows longer than range_bytes, a
  // header is malformed or a record would run past the range's end.
  Status Feed(std::span<const uint8_t> in, const RecordFn& on_record);

  // After the last piece: Corruption unless exactly num_chunks records filled range_bytes.
  Status Finish() const;

 private:
  // The length of the record whose header is `header`, at range offset `at`, after
  // checking the header.
  Result<size_t> RecordSize(std::span<const uint8_t> header, uint64_t at) const;
  Status Emit(std::span<const uint8_t> record, const RecordFn& on_record);

  uint32_t num_chunks_ = 0;
  uint64_t range_bytes_ = 0;
  uint32_t next_ = 0;             // chunk index of the next record
  uint64_t consumed_ = 0;         // range bytes consumed so far (whole records + pending_)
  std::vector<uint8_t> pending_;  // a record split across pieces
};

}  // namespace xet
