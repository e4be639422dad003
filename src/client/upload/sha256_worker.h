// Sha256Worker: SHA-256 of a byte stream computed on a side thread, so that a file's
// SHA-256 and its chunking and hashing (the uploader's worker thread) use two cores.
//
// Usage per block: Update(block) starts digesting it in the background and returns at once;
// the caller may read `block` meanwhile but must not change or free it before the next
// Wait() (or Finish()), which returns once the block is digested. Blocks are digested in
// the order given. Not thread-safe: one caller drives it. The side thread (a SideThread) is
// started by the first Update and lives as long as the object, so a worker that only ever
// digests inline (UpdateHere) or not at all costs no thread. One object digests any number
// of streams in turn (Finish resets it).
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "common/side_thread.h"
#include "format/sha256.h"

namespace xet {

class Sha256Worker {
 public:
  Sha256Worker() = default;
  Sha256Worker(const Sha256Worker&) = delete;
  Sha256Worker& operator=(const Sha256Worker&) = delete;

  // Requires: no block pending (Wait() since the last Update).
  void Update(std::span<const uint8_t> block);
  // Digests `block` on the calling thread (for blocks too small to be worth a hand-over).
  // Same requirement as Update.
  void UpdateHere(std::span<const uint8_t> block) { sha_.Update(block); }
  // Returns once the pending block (if any) is digested.
  void Wait() {
    if (thread_) thread_->Wait();
  }
  // Waits, then returns the digest of every block since the last Finish (or Reset) and
  // starts over.
  Sha256Digest Finish();
  // Waits and starts over without a digest (e.g. after a stream failed halfway).
  void Reset() { (void)Finish(); }
  // Whether the side thread has been started.
  bool threaded() const { return thread_.has_value(); }

 private:
  Sha256 sha_;                        // touched by the side thread only while a block is pending
  std::optional<SideThread> thread_;  // last: destroyed (joined) before sha_
};

}  // namespace xet
