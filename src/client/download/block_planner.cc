#include "client/download/block_planner.h"

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>

namespace xet {

std::vector<ByteSpan> SplitBlocks(uint64_t first, uint64_t last, uint64_t block_bytes) {
  std::vector<ByteSpan> out;
  if (last < first) return out;
  if (block_bytes == 0) block_bytes = 1;
  for (uint64_t start = first;;) {
    const uint64_t end = (last - start < block_bytes) ? last : start + block_bytes - 1;
    out.push_back({start, end});
    if (end == last) break;
    start = end + 1;
  }
  return out;
}

std::optional<RangeAt> FindCoveringRange(const std::vector<FetchEntry>& entries,
                                         uint32_t chunk_start, uint32_t chunk_end) {
  for (size_t e = 0; e < entries.size(); ++e) {
    const auto& ranges = entries[e].ranges;
    // Ranges ascend: the last one starting at or before the first chunk.
    auto r = std::upper_bound(ranges.begin(), ranges.end(), chunk_start,
                              [](uint32_t v, const FetchRange& fr) { return v < fr.chunk_start; });
    if (r == ranges.begin()) continue;
    --r;
    if (r->chunk_start <= chunk_start && chunk_end <= r->chunk_end) {
      return RangeAt{static_cast<uint32_t>(e), static_cast<uint32_t>(r - ranges.begin())};
    }
  }
  return std::nullopt;
}

namespace {

Status Bad(const std::string& what) { return Status::Corruption("reconstruction answer: " + what); }

// The fetch ranges of an answer: checked, found by xorb hash, and numbered densely so that
// each one in use gets exactly one RangeRef.
class FetchRangeTable {
 public:
  // Corruption for a range with no chunks or descending bytes.
  Status Index(const Reconstruction& recon) {
    xorb_index_.reserve(recon.xorbs.size());
    for (size_t i = 0; i < recon.xorbs.size(); ++i) {
      const auto& [hash, entries] = recon.xorbs[i];
      for (const FetchEntry& e : entries) {
        for (const FetchRange& r : e.ranges) {
          if (r.chunk_end <= r.chunk_start || r.byte_end < r.byte_start) {
            return Bad("empty or descending range in the fetch entry of xorb " + hash.ToHex());
          }
        }
      }
      xorb_index_.emplace(hash, static_cast<uint32_t>(i));
    }
    // (xorb, entry, range) -> RangeRef index, dense per xorb: offsets into a flat table.
    ref_base_.assign(recon.xorbs.size() + 1, 0);
    entry_base_.assign(recon.xorbs.size(), {});
    uint32_t total = 0;
    for (size_t x = 0; x < recon.xorbs.size(); ++x) {
      ref_base_[x] = total;
      for (const FetchEntry& e : recon.xorbs[x].second) {
        entry_base_[x].push_back(total - ref_base_[x]);
        total += static_cast<uint32_t>(e.ranges.size());
      }
    }
    ref_base_[recon.xorbs.size()] = total;
    ref_of_.assign(total, -1);
    return Status::Ok();
  }

  // The index of the xorb with this hash, or nullopt when it has no fetch entry.
  std::optional<uint32_t> Xorb(const Hash& hash) const {
    const auto it = xorb_index_.find(hash);
    if (it == xorb_index_.end()) return std::nullopt;
    return it->second;
  }

  // The RangeRef of range `at` of xorb `x` in `plan`, added on first use.
  uint32_t RefFor(uint32_t x, const RangeAt& at, BlockPlan& plan) {
    const size_t flat = ref_base_[x] + entry_base_[x][at.entry] + at.range;
    if (ref_of_[flat] < 0) {
      ref_of_[flat] = static_cast<int64_t>(plan.ranges.size());
      plan.ranges.push_back(RangeRef{x, at.entry, at.range, {}});
    }
    return static_cast<uint32_t>(ref_of_[flat]);
  }

 private:
  std::unordered_map<Hash, uint32_t, HashHasher> xorb_index_;
  std::vector<uint32_t> ref_base_;
  std::vector<std::vector<uint32_t>> entry_base_;
  std::vector<int64_t> ref_of_;
};

// Maps each term of `recon` to its fetch range and places its bytes in `plan.span`.
Status PlaceTerms(const Reconstruction& recon, FetchRangeTable& table, BlockPlan& plan) {
  const ByteSpan& span = plan.span;
  const uint64_t needed = span.size();
  if (recon.offset_into_first_range >= recon.terms.front().unpacked_length) {
    return Bad("offset_into_first_range " + std::to_string(recon.offset_into_first_range) +
               " is not inside the first term");
  }
  uint64_t data_pos = span.first - std::min(span.first, recon.offset_into_first_range);
  if (recon.offset_into_first_range > span.first) return Bad("offset_into_first_range too large");
  uint64_t written = 0;
  plan.terms.reserve(recon.terms.size());
  for (size_t ti = 0; ti < recon.terms.size(); ++ti) {
    const ReconTerm& t = recon.terms[ti];
    if (t.chunk_end <= t.chunk_start) return Bad("term " + std::to_string(ti) + " has no chunks");
    if (t.unpacked_length == 0) return Bad("term " + std::to_string(ti) + " has no bytes");
    const std::optional<uint32_t> x = table.Xorb(t.xorb_hash);
    if (!x) {
      return Bad("term " + std::to_string(ti) + " names xorb " + t.xorb_hash.ToHex() +
                 " without a fetch entry");
    }
    const auto& entries = recon.xorbs[*x].second;
    const std::optional<RangeAt> at = FindCoveringRange(entries, t.chunk_start, t.chunk_end);
    if (!at) {
      return Bad("no fetch range covers chunks " + std::to_string(t.chunk_start) + ".." +
                 std::to_string(t.chunk_end) + " of xorb " + t.xorb_hash.ToHex());
    }
    const uint32_t ref = table.RefFor(*x, *at, plan);
    const FetchRange& fr = entries[at->entry].ranges[at->range];

    TermPlacement p;
    p.range_ref = ref;
    p.chunk_offset = t.chunk_start - fr.chunk_start;
    p.num_chunks = t.chunk_end - t.chunk_start;
    p.unpacked_length = t.unpacked_length;
    p.data_offset = data_pos;
    p.skip = ti == 0 ? recon.offset_into_first_range : 0;
    if (p.skip >= t.unpacked_length) return Bad("term skips all of its bytes");
    p.take = std::min(t.unpacked_length - p.skip, needed - written);
    p.out_offset = written;
    written += p.take;
    data_pos += t.unpacked_length;
    if (p.take > 0) plan.ranges[ref].terms.push_back(static_cast<uint32_t>(ti));
    plan.terms.push_back(p);
  }
  if (written != needed) {
    return Bad("terms cover " + std::to_string(written) + " of the " + std::to_string(needed) +
               " bytes asked for");
  }
  return Status::Ok();
}

// Groups the ranges in use into calls: consecutive ranges of one entry, bounded bytes.
void GroupIntoTasks(const Reconstruction& recon, uint64_t max_task_bytes, BlockPlan& plan) {
  std::vector<uint32_t> order(plan.ranges.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const RangeRef& ra = plan.ranges[a];
    const RangeRef& rb = plan.ranges[b];
    return std::tie(ra.xorb, ra.entry, ra.range) < std::tie(rb.xorb, rb.entry, rb.range);
  });
  for (uint32_t idx : order) {
    const RangeRef& r = plan.ranges[idx];
    const FetchRange& fr = recon.xorbs[r.xorb].second[r.entry].ranges[r.range];
    const uint64_t bytes = fr.byte_end - fr.byte_start + 1;
    if (!plan.tasks.empty()) {
      FetchTask& last = plan.tasks.back();
      if (last.xorb == r.xorb && last.entry == r.entry && last.last_range + 1 == r.range &&
          last.bytes + bytes <= max_task_bytes) {
        last.last_range = r.range;
        last.refs.push_back(idx);
        last.bytes += bytes;
        continue;
      }
    }
    plan.tasks.push_back(FetchTask{r.xorb, r.entry, r.range, r.range, {idx}, bytes});
  }
  // Larger calls first: they take longest, so the tail of a block is short.
  std::stable_sort(plan.tasks.begin(), plan.tasks.end(),
                   [](const FetchTask& a, const FetchTask& b) { return a.bytes > b.bytes; });
}

}  // namespace

Result<BlockPlan> PlanBlock(const Reconstruction& recon, const ByteSpan& span,
                            uint64_t max_task_bytes) {
  BlockPlan plan;
  plan.span = span;
  if (span.last < span.first) return Status::InvalidArgument("PlanBlock: empty span");
  if (recon.terms.empty()) return Bad("no terms");
  FetchRangeTable table;
  XET_RETURN_IF_ERROR(table.Index(recon));
  XET_RETURN_IF_ERROR(PlaceTerms(recon, table, plan));
  GroupIntoTasks(recon, max_task_bytes, plan);
  return plan;
}

}  // namespace xet
