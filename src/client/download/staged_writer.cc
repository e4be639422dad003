#include "client/download/staged_writer.h"

#include <sys/uio.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace xet {

// Two buffers: a full one is written on the writer's own thread while the worker fills
// the other, so the worker does not wait for the disk (with one buffer it blocked in
// pwrite). O_DIRECT for whole pages: in this guest filling fresh page-cache pages cost more
// than everything else together.
StagedWriter::StagedWriter()
    : staging_{PageAlignedBuffer(kStagingBytes), PageAlignedBuffer(kStagingBytes)} {}

void StagedWriter::Reset(PartFile* part) {
  (void)Settle();
  part_ = part;
  active_ = false;
}

Status StagedWriter::Write(uint64_t offset, std::span<const uint8_t> bytes) {
  if (staging_[0].data() == nullptr || staging_[1].data() == nullptr) {
    // no mapping: write straight through
    const iovec v{const_cast<uint8_t*>(bytes.data()), bytes.size()};
    return part_->WriteAt(std::span<const iovec>(&v, 1), offset);
  }
  if (active_ && offset != base_ + hi_) XET_RETURN_IF_ERROR(Flush());
  if (!active_) {
    base_ = offset - offset % kAlign;
    lo_ = hi_ = static_cast<size_t>(offset - base_);
    active_ = true;
  }
  while (!bytes.empty()) {
    const size_t n = std::min(bytes.size(), kStagingBytes - hi_);
    std::memcpy(staging_[cur_].data() + hi_, bytes.data(), n);
    hi_ += n;
    bytes = bytes.subspan(n);
    if (hi_ == kStagingBytes) {
      XET_RETURN_IF_ERROR(WriteOut());
      base_ += kStagingBytes;
      lo_ = hi_ = 0;
    }
  }
  return Status::Ok();
}

Status StagedWriter::Flush() {
  Status st = active_ ? WriteOut() : Status::Ok();
  active_ = false;
  Status settled = Settle();
  return st.ok() ? settled : st;
}

Status StagedWriter::Settle() {
  if (!pending_) return Status::Ok();
  writer_.Wait();
  pending_ = false;
  return std::exchange(pending_status_, Status::Ok());
}

Status StagedWriter::WriteOut() {
  XET_RETURN_IF_ERROR(Settle());
  writer_.Start([this, part = part_, data = staging_[cur_].data(), base = base_, lo = lo_,
                 hi = hi_] { pending_status_ = WriteRun(*part, data, base, lo, hi); });
  pending_ = true;
  cur_ ^= 1;
  return Status::Ok();
}

Status StagedWriter::WriteRun(PartFile& part, const uint8_t* data, uint64_t base, size_t lo,
                              size_t hi) {
  const size_t first_page = (lo + kAlign - 1) / kAlign * kAlign;
  const size_t last_page = hi / kAlign * kAlign;
  auto buffered = [&](size_t from, size_t to) {
    if (from >= to) return Status::Ok();
    const iovec v{const_cast<uint8_t*>(data) + from, to - from};
    return part.WriteAt(std::span<const iovec>(&v, 1), base + from);
  };
  if (first_page >= last_page) return buffered(lo, hi);
  XET_RETURN_IF_ERROR(buffered(lo, first_page));
  XET_RETURN_IF_ERROR(part.WriteAlignedAt(
      std::span<const uint8_t>(data + first_page, last_page - first_page), base + first_page));
  return buffered(last_page, hi);
}

}  // namespace xet
