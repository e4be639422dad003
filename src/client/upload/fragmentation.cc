#include "client/upload/fragmentation.h"

namespace xet {

void FragmentationFilter::Push(bool known, uint64_t size, std::vector<Verdict>* out) {
  const bool first = index_++ == 0;
  if (!known) {
    if (run_chunks_ > 0 && !committed_) out->push_back({run_chunks_, false});
    run_chunks_ = 0;
    run_bytes_ = 0;
    committed_ = false;
    out->push_back({1, false});
    return;
  }
  if (run_chunks_ == 0) committed_ = first;  // a run at the file's start is always kept
  ++run_chunks_;
  run_bytes_ += size;
  if (committed_) {
    out->push_back({1, true});
  } else if (run_chunks_ >= kMinDedupRunChunks || run_bytes_ >= kMinDedupRunBytes) {
    committed_ = true;
    out->push_back({run_chunks_, true});
  }
}

void FragmentationFilter::Finish(std::vector<Verdict>* out) {
  // A run still undecided ends at the file's last chunk: an edge, kept.
  if (run_chunks_ > 0 && !committed_) out->push_back({run_chunks_, true});
  *this = FragmentationFilter();
}

}  // namespace xet
