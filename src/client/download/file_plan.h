// FilePlan: a whole file's reconstruction laid out for random access. Maps any byte range of
// the file to the xorb chunks that hold it, and a run of those chunks to the signed URL and
// the byte range that serve it. Pure: no I/O, no threads; immutable once built (shared by
// every reader of the file).
//
// Coordinates: a term's bytes are placed in "data" coordinates, where the file's byte 0 is
// data position offset_into_first_range (the first term may begin before the file does).
//
// A term is chunk-exact when the answer carried chunk detail for it (its chunk_lengths and
// its fetch range's chunk_offsets, see GetReconstruction's `chunk_detail`): then a byte
// range maps to exactly the chunks covering it, and any run of them is fetched alone.
// Otherwise a byte range maps to all of its term's chunks and the unit of fetching is the
// whole fetch range (the positions of chunks inside a term are known only once decoded).
#pragma once

#include <cstdint>
#include <vector>

#include "client/cas/cas_client.h"
#include "common/result.h"
#include "format/hash.h"

namespace xet {

class FilePlan {
 public:
  struct Term {
    uint64_t data_offset = 0;  // of the term's first byte
    uint64_t length = 0;       // unpacked_length
    uint32_t xorb = 0;         // index into the plan's xorbs
    uint32_t entry = 0, range = 0;
    uint32_t chunk_start = 0, chunk_end = 0;  // xorb chunk indices [start, end)
    // Chunk-exact terms: index into starts_ of the data offset (relative to the term) of its
    // first chunk, followed by one per further chunk and the term's length. kInexact else.
    uint32_t starts = kInexact;
    bool exact() const { return starts != kInexact; }
  };
  static constexpr uint32_t kInexact = UINT32_MAX;

  // The chunks of one term that hold some bytes of a read: xorb chunks [first, end), the
  // first of which starts at data position `data`. Chunk-exact terms name exactly the
  // chunks covering the read; others name all of the term's chunks.
  struct Piece {
    uint32_t term = 0;
    uint32_t first = 0, end = 0;
    uint64_t data = 0;
  };

  // A run of chunks fetched in one request: chunks [first, end) of fetch range (entry,
  // range) of xorb `xorb`, bytes [byte_first, byte_last] of the xorb object.
  struct Run {
    uint32_t xorb = 0, entry = 0, range = 0;
    uint32_t first = 0, end = 0;
    uint64_t byte_first = 0, byte_last = 0;
    bool exact = false;  // chunk_offsets known: any run of its chunks can be fetched alone
  };

  FilePlan() = default;

  // Lays out the answer for the whole file of `file_size` bytes. Corruption when the answer
  // is inconsistent: no terms (for a non-empty file), a term without chunks or bytes, a term
  // whose chunks no single fetch range covers, empty or descending fetch ranges,
  // offset_into_first_range not inside the first term, terms that do not cover exactly the
  // file, or malformed chunk detail (a chunk_lengths list of the wrong length or sum, a
  // chunk_offsets list of the wrong length, not strictly ascending or not from the range's
  // first byte to one past its last).
  static Result<FilePlan> Build(Reconstruction recon, uint64_t file_size);

  uint64_t size() const { return size_; }
  uint64_t skip() const { return skip_; }  // offset_into_first_range
  bool all_exact() const { return all_exact_; }
  const std::vector<Term>& terms() const { return terms_; }
  const Hash& xorb_hash(uint32_t x) const { return xorbs_[x].first; }
  const FetchEntry& entry(const Term& t) const { return xorbs_[t.xorb].second[t.entry]; }
  const FetchRange& range(const Term& t) const { return entry(t).ranges[t.range]; }

  // Appends to `out` the pieces of file bytes [offset, offset + length) (clipped to the
  // file), in file order. Nothing for an empty range or one at or past the end.
  void Map(uint64_t offset, uint64_t length, std::vector<Piece>* out) const;

  // The uncompressed length of chunk `chunk` (a xorb chunk index) of chunk-exact term `t`.
  uint32_t ChunkLength(const Term& t, uint32_t chunk) const;

  // The run that fetches chunks [first, end) of term `t`'s fetch range: exactly those
  // chunks for a chunk-exact term (requires them inside the range), else the whole range.
  Run RunFor(const Term& t, uint32_t first, uint32_t end) const;

  // Chunks [first, end) of exact run `r` (requires them inside its fetch range).
  Run Narrow(const Run& r, uint32_t first, uint32_t end) const;
  const FetchEntry& entry(const Run& r) const { return xorbs_[r.xorb].second[r.entry]; }

  // Appends to `out` the runs that fetch every chunk of file bytes [offset, offset + length)
  // (clipped to the file), in file order, each at most about `max_run_bytes` compressed
  // bytes (one chunk or one inexact range may be larger); consecutive pieces of one fetch
  // range are merged. For read-ahead.
  void Runs(uint64_t offset, uint64_t length, uint64_t max_run_bytes, std::vector<Run>* out) const;

 private:
  uint64_t size_ = 0;
  uint64_t skip_ = 0;
  bool all_exact_ = false;
  std::vector<Term> terms_;
  std::vector<uint64_t> starts_;
  std::vector<std::pair<Hash, std::vector<FetchEntry>>> xorbs_;
};

}  // namespace xet
