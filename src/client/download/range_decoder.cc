#include "client/download/range_decoder.h"

#include <algorithm>
#include <string>

#include "format/keyed_hash.h"

namespace xet {

Status RangeDecoder::Begin(const BlockPlan& plan, const RangeRef& ref, uint32_t num_chunks,
                           const std::vector<ChunkInfo>* expected, bool hash_chunks,
                           TermSink& sink) {
  if (expected != nullptr && expected->size() != num_chunks) {
    return Status::Corruption("cached range has a different number of chunks");
  }
  const size_t nterms = ref.terms.size();
  order_.resize(nterms);
  seen_.assign(nterms, 0);
  active_.clear();
  for (uint32_t k = 0; k < nterms; ++k) {
    const uint32_t ti = ref.terms[k];
    const TermPlacement& p = plan.terms[ti];
    if (static_cast<size_t>(p.chunk_offset) + p.num_chunks > num_chunks) {
      return Status::Corruption("reconstruction term " + std::to_string(ti) +
                                " lies outside its fetch range");
    }
    order_[k] = k;
    sink.Prepare(ti, p);
  }
  std::stable_sort(order_.begin(), order_.end(), [&](uint32_t x, uint32_t y) {
    return plan.terms[ref.terms[x]].chunk_offset < plan.terms[ref.terms[y]].chunk_offset;
  });
  plan_ = &plan;
  ref_ = &ref;
  sink_ = &sink;
  expected_ = expected;
  hash_ = hash_chunks || expected != nullptr;
  infos_.clear();
  if (hash_) infos_.reserve(num_chunks);
  next_term_ = 0;
  return Status::Ok();
}

Status RangeDecoder::Chunk(uint32_t i, const ChunkRecord& r, std::span<const uint8_t> payload) {
  const std::vector<TermPlacement>& terms = plan_->terms;
  const std::vector<uint32_t>& ref_terms = ref_->terms;
  while (next_term_ < ref_terms.size() && terms[ref_terms[order_[next_term_]]].chunk_offset <= i) {
    active_.push_back(order_[next_term_++]);
  }
  XET_ASSIGN_OR_RETURN(const std::span<const uint8_t> data,
                       DecodeChunkRecord(codec_, i, r, payload, chunk_));
  if (hash_) {
    infos_.push_back({ChunkHash(data), data.size()});
    if (expected_ != nullptr && (*expected_)[i] != infos_.back()) {
      return Status::Corruption("cached chunk " + std::to_string(i) + " differs");
    }
  }
  for (uint32_t k : active_) {
    const TermPlacement& p = terms[ref_terms[k]];
    const uint64_t pos = seen_[k];
    seen_[k] += data.size();
    const uint64_t lo = std::max(pos, p.skip);
    const uint64_t hi = std::min(pos + data.size(), p.skip + p.take);
    if (lo >= hi) continue;
    XET_RETURN_IF_ERROR(sink_->Put(ref_terms[k], p, lo - p.skip, data.subspan(lo - pos, hi - lo)));
  }
  std::erase_if(active_, [&](uint32_t k) {
    const TermPlacement& p = terms[ref_terms[k]];
    return p.chunk_offset + p.num_chunks <= i + 1;
  });
  return Status::Ok();
}

Status RangeDecoder::Finish() const {
  for (uint32_t k = 0; k < ref_->terms.size(); ++k) {
    const uint32_t ti = ref_->terms[k];
    const TermPlacement& p = plan_->terms[ti];
    if (seen_[k] != p.unpacked_length) {
      return Status::Corruption("reconstruction term " + std::to_string(ti) + ": its chunks hold " +
                                std::to_string(seen_[k]) + " bytes, the answer says " +
                                std::to_string(p.unpacked_length));
    }
  }
  return Status::Ok();
}

}  // namespace xet
