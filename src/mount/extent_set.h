// A set of byte ranges [start, end) kept merged: which bytes of a staged file are known
// locally (written, or fetched from the remote version), or which were changed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace xet {

class ExtentSet {
 public:
  // Adds [start, end); merges with touching or overlapping extents. Empty ranges are ignored.
  void Add(uint64_t start, uint64_t end);
  // Removes everything at or past `size` (a truncate).
  void TruncateTo(uint64_t size);
  // The sub-ranges of [start, end) that are not in the set, ascending.
  std::vector<std::pair<uint64_t, uint64_t>> Gaps(uint64_t start, uint64_t end) const;
  // True when [start, end) is wholly in the set (an empty range always is).
  bool Covers(uint64_t start, uint64_t end) const;
  size_t extent_count() const { return extents_.size(); }
  // Every extent [start, end), ascending.
  std::vector<std::pair<uint64_t, uint64_t>> Extents() const {
    return {extents_.begin(), extents_.end()};
  }
  void Clear() { extents_.clear(); }

 private:
  std::map<uint64_t, uint64_t> extents_;  // start -> end, disjoint, not touching
};

}  // namespace xet
