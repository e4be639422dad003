// StagedWriter: writes the decoded bytes of a download into its PartFile through two
// page-aligned staging buffers, so that whole pages go out with O_DIRECT and the worker
// producing the bytes does not wait for the disk.
//
// Bytes arrive as runs of consecutive file offsets (Write); a Write at an offset that does
// not continue the current run starts a new one. Byte i of a staging buffer is file offset
// base + i (base page aligned), so whole file pages are whole buffer pages: they are
// written with PartFile::WriteAlignedAt, the partial pages at a run's ends through the page
// cache (the neighbouring run, written by another worker, fills the rest of such a page).
// A full buffer is written on the writer's own thread while the caller fills the other.
// Not thread-safe: one worker drives it. Memory: 2 × kStagingBytes, mapped once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "client/download/part_file.h"
#include "common/huge_pages.h"
#include "common/side_thread.h"
#include "common/status.h"

namespace xet {

class StagedWriter {
 public:
  // Per buffer. A worker never holds more than twice this much decoded data.
  static constexpr size_t kStagingBytes = 8u << 20;

  StagedWriter();
  StagedWriter(const StagedWriter&) = delete;
  StagedWriter& operator=(const StagedWriter&) = delete;

  // Directs later writes to `part` (which must outlive them), after waiting for a write
  // still in progress; its outcome is dropped, and an unflushed run is abandoned.
  void Reset(PartFile* part);

  // Stages `bytes` for file offset `offset`; may start writing a full buffer. Requires a
  // Reset to a file. Without staging buffers (their mapping failed) writes straight
  // through. Returns the first error of a write it waited for.
  Status Write(uint64_t offset, std::span<const uint8_t> bytes);

  // Ends the current run: returns once all of it is written, with the first error.
  Status Flush();

  // Waits for the write in progress, if any; returns its outcome. Every task ends with it,
  // so no write outlives its task or its file.
  Status Settle();

 private:
  static constexpr size_t kAlign = PartFile::kDirectAlign;

  // Starts writing the current buffer's [lo_, hi_) on the writer thread and switches to
  // the other buffer (once its own write is done).
  Status WriteOut();
  // Writes data[lo, hi) at file offset base + lo: its whole pages aligned, the partial
  // ones buffered.
  static Status WriteRun(PartFile& part, const uint8_t* data, uint64_t base, size_t lo, size_t hi);

  PartFile* part_ = nullptr;
  PageAlignedBuffer staging_[2];
  size_t cur_ = 0;  // the buffer being filled
  bool active_ = false;
  uint64_t base_ = 0;       // file offset of staging_[cur_][0] (page aligned)
  size_t lo_ = 0, hi_ = 0;  // the run's bytes in staging_[cur_]
  bool pending_ = false;    // a write on writer_ not yet settled
  Status pending_status_;   // its outcome (written by writer_, read after Wait)
  SideThread writer_;       // last: joined first, while the buffers live
};

}  // namespace xet
