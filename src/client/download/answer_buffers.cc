#include "client/download/answer_buffers.h"

#include <algorithm>
#include <utility>

namespace xet {
namespace {

uint64_t RoundUpToGranule(uint64_t n, uint64_t granule) {
  return (n + granule - 1) / granule * granule;
}

}  // namespace

AnswerBuffers::AnswerBuffers(uint64_t budget) : budget_(std::max<uint64_t>(1, budget)) {}

bool AnswerBuffers::TryLease(uint64_t charge, Lease* lease,
                             std::vector<std::vector<uint8_t>>* dropped) {
  // The smallest free buffer that is large enough.
  auto best = free_.end();
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->capacity() >= charge && (best == free_.end() || it->capacity() < best->capacity())) {
      best = it;
    }
  }
  if (best != free_.end()) {
    lease->counted = best->capacity();
    lease->buffer = std::move(*best);
    free_.erase(best);
  } else {
    // Drop free buffers, largest first, until a new one fits.
    std::sort(free_.begin(), free_.end(),
              [](const auto& a, const auto& b) { return a.capacity() < b.capacity(); });
    while (!free_.empty() && held_ + charge > budget_) {
      held_ -= free_.back().capacity();
      dropped->push_back(std::move(free_.back()));
      free_.pop_back();
    }
    if (held_ + charge > budget_ && leased_ > 0) return false;
    lease->counted = std::max(
        charge, std::min(RoundUpToGranule(charge, kGranule), budget_ - std::min(held_, budget_)));
    held_ += lease->counted;
    lease->fresh = true;
  }
  ++leased_;
  return true;
}

void AnswerBuffers::Return(Lease lease, bool discard, std::vector<std::vector<uint8_t>>* dropped) {
  --leased_;
  held_ = held_ - lease.counted + lease.buffer.capacity();
  if (held_ > budget_ || discard) {
    held_ -= lease.buffer.capacity();
    dropped->push_back(std::move(lease.buffer));
  } else {
    free_.push_back(std::move(lease.buffer));
  }
}

}  // namespace xet
