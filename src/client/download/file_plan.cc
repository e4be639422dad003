#include "client/download/file_plan.h"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "client/download/block_planner.h"

namespace xet {
namespace {

Status BadFilePlan(const std::string& what) {
  return Status::Corruption("reconstruction answer: " + what);
}

// A fetch range's chunk_offsets, when present: one per chunk and one past the last record,
// strictly ascending from the range's first byte to one past its last.
bool ChunkOffsetsAreSane(const FetchRange& fr) {
  const auto& o = fr.chunk_offsets;
  if (o.empty()) return true;
  if (o.size() != size_t{fr.chunk_end - fr.chunk_start} + 1) return false;
  if (o.front() != fr.byte_start || o.back() != fr.byte_end + 1) return false;
  for (size_t i = 1; i < o.size(); ++i) {
    if (o[i] <= o[i - 1]) return false;
  }
  return true;
}

}  // namespace

Result<FilePlan> FilePlan::Build(Reconstruction recon, uint64_t file_size) {
  FilePlan p;
  p.size_ = file_size;
  p.skip_ = recon.offset_into_first_range;
  p.all_exact_ = true;
  if (file_size == 0) return p;
  if (recon.terms.empty()) return BadFilePlan("no terms");
  if (p.skip_ >= recon.terms.front().unpacked_length) {
    return BadFilePlan("offset_into_first_range " + std::to_string(p.skip_) +
                       " is not inside the first term");
  }
  std::unordered_map<Hash, uint32_t, HashHasher> index;
  for (size_t x = 0; x < recon.xorbs.size(); ++x) {
    for (const FetchEntry& e : recon.xorbs[x].second) {
      for (const FetchRange& fr : e.ranges) {
        if (fr.chunk_end <= fr.chunk_start || fr.byte_end < fr.byte_start) {
          return BadFilePlan("empty or descending fetch range of xorb " +
                             recon.xorbs[x].first.ToHex());
        }
        if (!ChunkOffsetsAreSane(fr)) {
          return BadFilePlan("malformed chunk_offsets in a fetch range of xorb " +
                             recon.xorbs[x].first.ToHex());
        }
      }
    }
    index.emplace(recon.xorbs[x].first, static_cast<uint32_t>(x));
  }
  uint64_t data = 0;
  p.terms_.reserve(recon.terms.size());
  for (size_t i = 0; i < recon.terms.size(); ++i) {
    const ReconTerm& rt = recon.terms[i];
    const std::string name = "term " + std::to_string(i);
    if (rt.chunk_end <= rt.chunk_start) return BadFilePlan(name + " has no chunks");
    if (rt.unpacked_length == 0) return BadFilePlan(name + " has no bytes");
    if (rt.unpacked_length > UINT64_MAX - data) return BadFilePlan(name + " overflows the file");
    const auto x = index.find(rt.xorb_hash);
    if (x == index.end()) return BadFilePlan(name + " names a xorb without a fetch entry");
    const auto at = FindCoveringRange(recon.xorbs[x->second].second, rt.chunk_start, rt.chunk_end);
    if (!at) return BadFilePlan("no fetch range covers the chunks of " + name);
    Term t;
    t.data_offset = data;
    t.length = rt.unpacked_length;
    t.xorb = x->second;
    t.entry = at->entry;
    t.range = at->range;
    t.chunk_start = rt.chunk_start;
    t.chunk_end = rt.chunk_end;
    const FetchRange& fr = recon.xorbs[t.xorb].second[t.entry].ranges[t.range];
    if (!rt.chunk_lengths.empty()) {
      if (rt.chunk_lengths.size() != rt.chunk_end - rt.chunk_start) {
        return BadFilePlan(name + ": chunk_lengths has " + std::to_string(rt.chunk_lengths.size()) +
                           " entries for " + std::to_string(rt.chunk_end - rt.chunk_start) +
                           " chunks");
      }
      uint64_t sum = 0;
      for (uint32_t n : rt.chunk_lengths) {
        if (n == 0) return BadFilePlan(name + ": a chunk of length 0");
        sum += n;
      }
      if (sum != rt.unpacked_length) {
        return BadFilePlan(name + ": chunk_lengths add up to " + std::to_string(sum) + ", not " +
                           std::to_string(rt.unpacked_length));
      }
    }
    if (!rt.chunk_lengths.empty() && !fr.chunk_offsets.empty() &&
        p.starts_.size() + rt.chunk_lengths.size() < kInexact) {
      t.starts = static_cast<uint32_t>(p.starts_.size());
      uint64_t at_byte = 0;
      p.starts_.push_back(0);
      for (uint32_t n : rt.chunk_lengths) p.starts_.push_back(at_byte += n);
    } else {
      p.all_exact_ = false;
    }
    data += rt.unpacked_length;
    p.terms_.push_back(t);
  }
  if (data - p.skip_ != file_size) {
    return BadFilePlan("the terms hold " + std::to_string(data - p.skip_) + " bytes of a " +
                       std::to_string(file_size) + "-byte file");
  }
  p.xorbs_ = std::move(recon.xorbs);
  return p;
}

void FilePlan::Map(uint64_t offset, uint64_t length, std::vector<Piece>* out) const {
  if (offset >= size_ || length == 0) return;
  const uint64_t d0 = offset + skip_;
  const uint64_t d1 = offset + std::min(length, size_ - offset) + skip_;
  auto it = std::upper_bound(terms_.begin(), terms_.end(), d0,
                             [](uint64_t v, const Term& t) { return v < t.data_offset; });
  --it;  // terms_[0].data_offset is 0 <= d0
  for (; it != terms_.end() && it->data_offset < d1; ++it) {
    const Term& t = *it;
    const auto ti = static_cast<uint32_t>(it - terms_.begin());
    if (!t.exact()) {
      out->push_back({ti, t.chunk_start, t.chunk_end, t.data_offset});
      continue;
    }
    const uint64_t lo = std::max(d0, t.data_offset) - t.data_offset;
    const uint64_t hi = std::min(d1, t.data_offset + t.length) - t.data_offset;
    const uint64_t* s = starts_.data() + t.starts;
    const uint64_t* s_end = s + (t.chunk_end - t.chunk_start) + 1;
    const auto k0 = static_cast<uint32_t>(std::upper_bound(s, s_end, lo) - s - 1);
    const auto k1 = static_cast<uint32_t>(std::upper_bound(s, s_end, hi - 1) - s - 1);
    out->push_back({ti, t.chunk_start + k0, t.chunk_start + k1 + 1, t.data_offset + s[k0]});
  }
}

uint32_t FilePlan::ChunkLength(const Term& t, uint32_t chunk) const {
  const size_t k = t.starts + size_t{chunk - t.chunk_start};
  return static_cast<uint32_t>(starts_[k + 1] - starts_[k]);
}

FilePlan::Run FilePlan::RunFor(const Term& t, uint32_t first, uint32_t end) const {
  const FetchRange& fr = range(t);
  Run r{t.xorb,       t.entry,       t.range,     fr.chunk_start,
        fr.chunk_end, fr.byte_start, fr.byte_end, !fr.chunk_offsets.empty()};
  return t.exact() ? Narrow(r, first, end) : r;
}

FilePlan::Run FilePlan::Narrow(const Run& r, uint32_t first, uint32_t end) const {
  const FetchRange& fr = entry(r).ranges[r.range];
  Run n = r;
  n.first = first;
  n.end = end;
  n.byte_first = fr.chunk_offsets[first - fr.chunk_start];
  n.byte_last = fr.chunk_offsets[end - fr.chunk_start] - 1;
  return n;
}

void FilePlan::Runs(uint64_t offset, uint64_t length, uint64_t max_run_bytes,
                    std::vector<Run>* out) const {
  std::vector<Piece> pieces;
  Map(offset, length, &pieces);
  auto same_range = [](const Run& a, const Run& b) {
    return a.xorb == b.xorb && a.entry == b.entry && a.range == b.range;
  };
  for (const Piece& pc : pieces) {
    const Term& t = terms_[pc.term];
    if (!t.exact()) {
      const Run whole = RunFor(t, pc.first, pc.end);
      if (out->empty() || !same_range(out->back(), whole)) out->push_back(whole);
      continue;
    }
    for (uint32_t c = pc.first; c < pc.end; ++c) {
      const Run one = RunFor(t, c, c + 1);
      if (!out->empty() && same_range(out->back(), one)) {
        Run& last = out->back();
        if (last.first <= c && c < last.end) continue;  // already fetched by the last run
        if (last.end == c && one.byte_last - last.byte_first + 1 <= max_run_bytes) {
          last.end = c + 1;
          last.byte_last = one.byte_last;
          continue;
        }
      }
      out->push_back(one);
    }
  }
}

}  // namespace xet
