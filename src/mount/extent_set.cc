#include "mount/extent_set.h"

#include <algorithm>
#include <iterator>

namespace xet {

void ExtentSet::Add(uint64_t start, uint64_t end) {
  if (start >= end) return;
  auto it = extents_.upper_bound(start);
  if (it != extents_.begin()) {
    auto prev = std::prev(it);
    if (prev->second >= start) {  // overlaps or touches the previous extent
      start = prev->first;
      end = std::max(end, prev->second);
      it = extents_.erase(prev);
    }
  }
  while (it != extents_.end() && it->first <= end) {
    end = std::max(end, it->second);
    it = extents_.erase(it);
  }
  extents_.emplace(start, end);
}

void ExtentSet::TruncateTo(uint64_t size) {
  auto it = extents_.lower_bound(size);
  extents_.erase(it, extents_.end());
  if (!extents_.empty()) {
    auto last = std::prev(extents_.end());
    last->second = std::min(last->second, size);
    if (last->first >= last->second) extents_.erase(last);
  }
}

std::vector<std::pair<uint64_t, uint64_t>> ExtentSet::Gaps(uint64_t start, uint64_t end) const {
  std::vector<std::pair<uint64_t, uint64_t>> gaps;
  if (start >= end) return gaps;
  auto it = extents_.upper_bound(start);
  if (it != extents_.begin()) {
    auto prev = std::prev(it);
    if (prev->second > start) start = prev->second;
  }
  while (start < end) {
    if (it == extents_.end() || it->first >= end) {
      gaps.emplace_back(start, end);
      break;
    }
    if (it->first > start) gaps.emplace_back(start, it->first);
    start = std::max(start, it->second);
    ++it;
  }
  return gaps;
}

bool ExtentSet::Covers(uint64_t start, uint64_t end) const { return Gaps(start, end).empty(); }

}  // namespace xet
