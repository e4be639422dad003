// Fragmentation prevention for deduplication (Xet spec, deduplication.md: "prefer long runs").
//
// Referencing every chunk the server already has makes a modified file reconstruct from
// many short terms: more reconstruction entries, more small ranged reads, and xorbs kept
// alive by a few chunks each. So a run of consecutive already-stored chunks is referenced
// only when it is long enough; a short run that sits between new data is uploaded again
// with that new data.
//
// The constants follow xet-core (xet-data's DefragPrevention; config
// `min_n_chunks_per_range` = 8, "targets an average of 1MB per range"): a run is kept when
// it has at least kMinDedupRunChunks chunks OR at least kMinDedupRunBytes bytes (8 chunks
// of the 64 KiB target size is 512 KiB; chunks of random data average ~64 KiB, so 8 chunks
// or 1 MiB is one ranged read worth making). Runs at a file's edges are always kept: a run
// that starts at the file's first chunk or ends at its last chunk adds at most one term at
// each end of the file, never fragmentation in the middle, and a file that is entirely
// known (a re-upload) is one such run and sends nothing. xet-core additionally uses a
// rolling estimate over the last 128 runs with hysteresis; a per-run rule is simpler to
// reason about and test, and bounds the worst case the same way (every interior term is
// >= 8 chunks or >= 1 MiB), at the cost of re-sending at most ~1 MiB per short run.
//
// Streaming: the filter decides chunks in order with a bounded look-ahead (an undecided run
// is at most kMinDedupRunChunks chunks and < kMinDedupRunBytes + one chunk), so a caller
// holds at most that much data back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace xet {

inline constexpr size_t kMinDedupRunChunks = 8;
inline constexpr uint64_t kMinDedupRunBytes = 1 << 20;

class FragmentationFilter {
 public:
  // The oldest `count` undecided chunks are decided: referenced (reference = true) or
  // uploaded as new data.
  struct Verdict {
    size_t count = 0;
    bool reference = false;
    friend bool operator==(const Verdict&, const Verdict&) = default;
  };

  // Feeds the file's next chunk: whether it is already stored somewhere (`known`) and its
  // size. Appends the verdicts now possible to *out (oldest first).
  void Push(bool known, uint64_t size, std::vector<Verdict>* out);
  // Ends the file: decides what is left (a pending run ends at the file's edge: kept) and
  // resets the filter for a new file.
  void Finish(std::vector<Verdict>* out);

  // Chunks pushed but not decided yet.
  size_t undecided() const { return committed_ ? 0 : run_chunks_; }

 private:
  uint64_t index_ = 0;      // chunks pushed in this file
  size_t run_chunks_ = 0;   // length of the current run of known chunks (0: none)
  uint64_t run_bytes_ = 0;  // its bytes
  bool committed_ = false;  // the current run is long enough (or at the start): kept
};

}  // namespace xet
