// BlockReader: reads a ByteSource in blocks of a fixed size, the next block ahead on a side
// thread while the caller works on the current one, so that a large file's read (a copy
// out of the page cache) overlaps its chunking and hashing.
//
// Each Next(carry) returns one contiguous view: the `carry` bytes the caller still needs
// from the previous view (e.g. the open chunk) followed by the block's fresh bytes. Two
// buffers of max_carry + block_bytes alternate: the view is in one while the block after
// it is read into the other. A block is full unless the source ended in it.
//
// Small sources cost no thread: the first block is read on the caller's thread, and the
// side thread (started once, on first need) reads ahead only when asked and after a full
// block; the second buffer is allocated on first need too. Not thread-safe: one caller drives it.
// Any number of sources in turn (Start each).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "common/byte_source.h"
#include "common/result.h"
#include "common/side_thread.h"

namespace xet {

class BlockReader {
 public:
  struct View {
    std::span<const uint8_t> all;    // carry + fresh, contiguous
    std::span<const uint8_t> fresh;  // the block's bytes (the tail of `all`)
    bool end = false;                // the source ended: call Start before the next Next
  };

  // Requires block_bytes > 0.
  BlockReader(size_t block_bytes, size_t max_carry);
  ~BlockReader();  // waits for a read in flight
  BlockReader(const BlockReader&) = delete;
  BlockReader& operator=(const BlockReader&) = delete;

  // Begins a new source (after waiting for a read in flight from the previous one).
  // `source` must stay valid until the View with end = true, Stop, the next Start or the
  // destructor.
  void Start(ByteSource* source);

  // Waits for a read in flight and forgets the source: call it before a source abandoned
  // before its end goes away.
  void Stop();

  // The next block after `carry`. With `read_ahead`, the block after it is read on the
  // side thread meanwhile (when this one is full); otherwise it is read by the next call.
  // Reading ahead pays when the caller's work leaves a core idle: a third busy thread on
  // cores that are all chunking only slows the chunking down.
  // Requires: Start was called; the previous View (if any) had end = false;
  // carry.size() <= max_carry and `carry` lies in the previous View's `all` (or is empty).
  // Returns the source's error or the View. Every earlier View is invalid once it returns.
  Result<View> Next(std::span<const uint8_t> carry, bool read_ahead);

 private:
  struct Slot {
    std::unique_ptr<uint8_t[]> bytes;  // max_carry_ + block_bytes_
    size_t fresh = 0;                  // bytes read into it, at offset max_carry_
    bool end = false;
    Status status;
  };
  // Fills `slot` with the next block of source_ (on whichever thread calls it).
  void Fill(Slot& slot);
  void Wait();

  const size_t block_bytes_;
  const size_t max_carry_;
  ByteSource* source_ = nullptr;
  Slot slots_[2];
  int current_ = 0;                   // slot of the last View
  bool ahead_ = false;                // the other slot is being (or was) filled by the side thread
  bool first_ = true;                 // no View yet for this source
  std::optional<SideThread> thread_;  // last: joined before the slots go
};

}  // namespace xet
