// AnswerBuffers: the accounting of the buffers multi-range fetches receive their answers
// into, within a download's byte budget (DownloadOptions::max_bytes_in_flight).
//
// Buffers are reused from task to task so their pages are faulted in once. held() counts
// every buffer, lent or free (a lent one at least its task's charge), and stays within the
// budget except for one buffer alone (a task larger than the budget still runs, by
// itself). Not thread-safe: the download transfer calls it under its own lock, and frees
// the buffers it drops and allocates the new ones outside that lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace xet {

class AnswerBuffers {
 public:
  // A buffer lent to a running task and the bytes it counts for in held().
  struct Lease {
    bool fresh = false;  // a new buffer: the caller reserves `counted` bytes for it
    std::vector<uint8_t> buffer;
    uint64_t counted = 0;
  };

  // New buffers are sized in multiples of this (a huge page).
  static constexpr uint64_t kGranule = 2ull << 20;

  // `budget` bytes at most (at least 1).
  explicit AnswerBuffers(uint64_t budget);

  // A buffer for a task of `charge` (> 0) bytes, if one fits now: the smallest free buffer
  // at least that large, else a new one (a fresh lease, its size rounded up within the
  // budget so tasks of about the same size reuse each other's) once held() + charge fits
  // the budget after dropping free buffers largest first into `dropped`, or whatever the
  // size when no other buffer is lent. False (nothing lent) when the task must wait for a
  // Return; free buffers may have been dropped meanwhile.
  bool TryLease(uint64_t charge, Lease* lease, std::vector<std::vector<uint8_t>>* dropped);

  // Takes back a lent buffer: kept for the next task, unless that would exceed the budget
  // or `discard` (the download failed), when it goes to `dropped`.
  void Return(Lease lease, bool discard, std::vector<std::vector<uint8_t>>* dropped);

  uint64_t held() const { return held_; }
  size_t leased() const { return leased_; }
  size_t free_buffers() const { return free_.size(); }

 private:
  const uint64_t budget_;
  std::vector<std::vector<uint8_t>> free_;
  uint64_t held_ = 0;
  size_t leased_ = 0;
};

}  // namespace xet
