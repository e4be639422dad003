// MerkleHashSubtree: the partially aggregated merkle state of a contiguous run of a file's
// chunks, in O(log n) nodes, that can be merged with its neighbours and finalized into the
// same root MerkleRoot computes over all the chunks. It is the opaque value of the
// `hashRanges` entries of GET /v2/file-chunk-hashes/{file_id}: a stock xet-core client
// deserializes each entry, merges [gap0, window0, gap1, ..., gapN] and takes the root, so
// construction, merge and the JSON form follow xet-core's `MerkleHashSubtree`
// (xet_core_structures/src/merklehash/merkle_hash_subtree.rs) exactly.
//
// Representation (a "hump"). Level 0 holds chunks; each higher level holds merged groups of
// the level below (the content-defined grouping of format/merkle.h). At every level the
// subtree keeps only the nodes it cannot merge yet without knowing its neighbours: a left
// part (before the first group boundary that is fixed whatever precedes the run) and a
// right part (after the last boundary fixed whatever follows it); everything between is
// merged and promoted to the next level. `nodes` stores all left parts by ascending level,
// then all right parts by descending level; `levels[i]` = {left count, right count} of
// level i. A run known to begin the file (`at_start`) has no left parts, one known to end
// it (`at_end`) no right parts; one that is both collapses to a single top node, the root.
//
// JSON form (serde's human-readable form, compact, fields in this order):
//   {"nodes":[{"hash":"<xet hex>","size":N},...],"levels":[[L,R],...],
//    "at_start":BOOL,"at_end":BOOL}
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/status.h"
#include "format/hash.h"
#include "format/merkle.h"

namespace xet {

// Node counts of one level of a subtree: the unmerged prefix (left) and suffix (right).
struct SubtreeLevel {
  uint64_t left = 0;
  uint64_t right = 0;
  friend bool operator==(const SubtreeLevel&, const SubtreeLevel&) = default;
};

class MerkleHashSubtree {
 public:
  // An empty run that neither starts nor ends the file (levels = {{0,0}}).
  MerkleHashSubtree();

  // The subtree of `chunks` (level-0 (hash, size) pairs, in file order). `at_start`: the
  // first chunk is the file's first chunk; `at_end`: the last chunk is the file's last.
  // Deterministic: equal inputs give equal subtrees (and equal JSON), as in xet-core.
  static MerkleHashSubtree FromChunks(bool at_start, std::span<const ChunkInfo> chunks,
                                      bool at_end);

  // A subtree from its stored parts, as read off the wire. InvalidArgument unless the level
  // counts add up to nodes.size() and there is at least one level.
  static Result<MerkleHashSubtree> FromParts(std::vector<ChunkInfo> nodes,
                                             std::vector<SubtreeLevel> levels, bool at_start,
                                             bool at_end);

  // Appends `right`, the run that immediately follows this one. InvalidArgument (and no
  // change) if this run ends the file or `right` starts it. Keeps at_start, takes
  // right.at_end.
  Status MergeFrom(const MerkleHashSubtree& right);

  // Merges consecutive runs left to right. No runs: the empty file (at_start and at_end).
  static Result<MerkleHashSubtree> Merge(std::span<const MerkleHashSubtree> runs);

  // The merkle root (MerkleRoot of the run's chunks) when the run is the whole file
  // (at_start and at_end): all zeros for no chunks. nullopt otherwise, or when the shape is
  // not that of a closed run (only possible for a subtree read off the wire).
  std::optional<Hash> Root() const;

  bool empty() const { return nodes_.empty(); }
  bool at_start() const { return at_start_; }
  bool at_end() const { return at_end_; }
  std::span<const ChunkInfo> nodes() const { return nodes_; }
  std::span<const SubtreeLevel> levels() const { return levels_; }

  // Appends the JSON form (see the file comment) to *out.
  void AppendJson(std::string* out) const;
  std::string ToJson() const;
  // Parses the JSON form. Unknown fields are ignored (as serde does); the four known ones
  // are required. InvalidArgument on anything else, including inconsistent level counts.
  static Result<MerkleHashSubtree> FromJson(std::string_view json);

  friend bool operator==(const MerkleHashSubtree&, const MerkleHashSubtree&) = default;

 private:
  MerkleHashSubtree(std::vector<ChunkInfo> nodes, std::vector<SubtreeLevel> levels, bool at_start,
                    bool at_end);

  std::vector<ChunkInfo> nodes_;
  std::vector<SubtreeLevel> levels_;
  bool at_start_ = false;
  bool at_end_ = false;
};

// The stability scans the subtree is built on, exposed for tests. A natural cut is a node
// whose hash's last 8 bytes (LE u64) are = 0 mod 4.
//
// FindStableStart: the first index m such that a group of the aggregation always starts at
// nodes[m] whatever nodes precede the slice: with c0 < c1 < c2 the first three consecutive
// natural cuts whose gaps c1-c0 and c2-c1 both lie in (2, 8), m = c1 + 1. nullopt if none
// (always for fewer than 3 nodes).
std::optional<size_t> FindStableStart(std::span<const ChunkInfo> nodes);
// FindStableEnd: the mirror scan from the right: the last such triple c0 < c1 < c2 (found
// scanning right to left) gives c1 + 1, an index at which a group always starts whatever
// nodes follow the slice.
std::optional<size_t> FindStableEnd(std::span<const ChunkInfo> nodes);

}  // namespace xet
