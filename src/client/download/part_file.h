// The partial file of a download: "<dest>.xetpart", written at offsets, and its sidecar
// "<dest>.xetpart.json" recording the file hash, the size, the planning block size and, for
// each completed block, the chunks (hash, size) that start in it. An interrupted download
// reopens both and fetches only the blocks the sidecar does not list; the chunks kept there
// let the finished file's Xet hash be checked without re-reading it. Commit() makes the
// file durable and renames it over the destination; until then the destination is never
// touched.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "format/hash.h"
#include "format/merkle.h"

namespace xet {

struct PartSidecar {
  Hash file_hash;
  uint64_t size = 0;
  uint64_t block_bytes = 0;
  std::map<uint64_t, std::vector<ChunkInfo>> done;  // block index -> chunks starting in it
};

std::string SerializeSidecar(const PartSidecar& s);
// InvalidArgument when the text is not a sidecar this version wrote.
Result<PartSidecar> ParseSidecar(const std::string& text);

class PartFile {
 public:
  static std::string PartPath(const std::string& dest) { return dest + ".xetpart"; }
  static std::string SidecarPath(const std::string& dest) { return dest + ".xetpart.json"; }
  // Whether `path` names a partial file, a sidecar or the temporary a sidecar is written
  // through (".<dest>.xetpart.json.tmp-<pid>", left behind by a download killed mid-write).
  static bool IsPartOrSidecarPath(std::string_view path);

  // Opens the partial file of `dest`. Resumes when a sidecar for the same file hash, size
  // and block size exists and the partial file has `size` bytes; otherwise starts afresh
  // (an empty partial file of `size` bytes and a sidecar with no blocks done). Either way,
  // sidecar temporaries of earlier downloads of `dest` that were killed are removed.
  static Result<std::unique_ptr<PartFile>> Open(const std::string& dest, const Hash& file_hash,
                                                uint64_t size, uint64_t block_bytes);
  ~PartFile();
  PartFile(const PartFile&) = delete;
  PartFile& operator=(const PartFile&) = delete;

  bool resumed() const { return resumed_; }
  const PartSidecar& sidecar() const { return sidecar_; }
  bool IsDone(uint64_t block) const { return sidecar_.done.count(block) != 0; }

  // Writes the buffers, in order, at `offset` (pwritev, partial writes continued).
  // Thread-safe (positional writes).
  Status WriteAt(std::span<const iovec> buffers, uint64_t offset);

  // Alignment WriteAlignedAt needs for O_DIRECT (covers 512-byte and 4 KiB blocks).
  static constexpr size_t kDirectAlign = 4096;
  // Writes `data` at `offset`, bypassing the page cache (O_DIRECT) when the address, the
  // size and the offset are multiples of kDirectAlign and the file system allows it;
  // otherwise as WriteAt. Thread-safe; writes to disjoint pages may mix with WriteAt.
  Status WriteAlignedAt(std::span<const uint8_t> data, uint64_t offset);

  // Records block `block` as complete in memory (IsDone and AllChunks list it); the
  // sidecar lists it after the next Checkpoint (or never, if Commit comes first: a crash
  // before either costs fetching the block again on resume). Not thread-safe.
  void RecordDone(uint64_t block, std::vector<ChunkInfo> chunks);
  // Makes every recorded block durable: the data is flushed (fdatasync) before the sidecar
  // is rewritten atomically, so a listed block is on disk. Does nothing when no block was
  // recorded since the last checkpoint. Not thread-safe.
  Status Checkpoint();
  // RecordDone, then Checkpoint.
  Status MarkDone(uint64_t block, std::vector<ChunkInfo> chunks) {
    RecordDone(block, std::move(chunks));
    return Checkpoint();
  }

  // Every chunk of the completed blocks, in file order.
  std::vector<ChunkInfo> AllChunks() const;

  // fsync, rename over `dest`, fsync the directory, remove the sidecar.
  Status Commit();
  // Removes the partial file and its sidecar (after a failed integrity check).
  void Discard();

 private:
  PartFile(std::string dest, int fd, PartSidecar sidecar, bool resumed)
      : dest_(std::move(dest)), fd_(fd), sidecar_(std::move(sidecar)), resumed_(resumed) {}

  // A second descriptor with O_DIRECT (-1 where the file system refuses it).
  void OpenDirect();

  std::string dest_;
  int fd_ = -1;
  int direct_fd_ = -1;
  std::atomic<bool> direct_ok_{true};
  PartSidecar sidecar_;
  bool unsaved_ = false;  // blocks recorded since the last checkpoint
  bool resumed_ = false;
};

}  // namespace xet
