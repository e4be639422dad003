#include "client/upload/block_reader.h"

#include <cstring>

#include "common/huge_pages.h"

namespace xet {
namespace {

std::unique_ptr<uint8_t[]> NewBuffer(size_t bytes) {
  // Not zero-filled, and advised for huge pages: a small file faults in only the pages its
  // read fills, a large one few faults.
  auto buffer = std::make_unique_for_overwrite<uint8_t[]>(bytes);
  AdviseHugePages(buffer.get(), bytes);
  return buffer;
}

}  // namespace

BlockReader::BlockReader(size_t block_bytes, size_t max_carry)
    : block_bytes_(block_bytes), max_carry_(max_carry) {
  slots_[0].bytes = NewBuffer(max_carry + block_bytes);
}

BlockReader::~BlockReader() { Wait(); }

void BlockReader::Wait() {
  if (thread_) thread_->Wait();
}

void BlockReader::Start(ByteSource* source) {
  Stop();
  source_ = source;
}

void BlockReader::Stop() {
  Wait();
  source_ = nullptr;
  ahead_ = false;
  first_ = true;
}

void BlockReader::Fill(Slot& slot) {
  slot.fresh = 0;
  slot.end = false;
  slot.status = Status::Ok();
  uint8_t* dst = slot.bytes.get() + max_carry_;
  while (slot.fresh < block_bytes_) {  // short reads are topped up
    auto n = source_->Read({dst + slot.fresh, block_bytes_ - slot.fresh});
    if (!n.ok()) {
      slot.status = n.status();
      return;
    }
    if (*n == 0) {
      slot.end = true;
      return;
    }
    slot.fresh += *n;
  }
}

Result<BlockReader::View> BlockReader::Next(std::span<const uint8_t> carry, bool read_ahead) {
  int next = 1 - current_;
  if (first_) {
    next = current_;  // no carry yet: read into the current slot, on this thread
    first_ = false;
    Fill(slots_[next]);
  } else if (ahead_) {
    Wait();
    ahead_ = false;
  } else {
    if (!slots_[next].bytes) slots_[next].bytes = NewBuffer(max_carry_ + block_bytes_);
    Fill(slots_[next]);
  }
  Slot& slot = slots_[next];
  XET_RETURN_IF_ERROR(slot.status);
  uint8_t* fresh = slot.bytes.get() + max_carry_;
  if (!carry.empty()) std::memmove(fresh - carry.size(), carry.data(), carry.size());
  current_ = next;
  const View view{{fresh - carry.size(), carry.size() + slot.fresh}, {fresh, slot.fresh}, slot.end};
  if (read_ahead && !slot.end) {
    // A full block: the source is likely large, so read the next one meanwhile.
    Slot& other = slots_[1 - current_];
    if (!other.bytes) other.bytes = NewBuffer(max_carry_ + block_bytes_);
    if (!thread_) thread_.emplace();
    ahead_ = true;
    thread_->Start([this, &other] { Fill(other); });
  }
  return view;
}

}  // namespace xet
