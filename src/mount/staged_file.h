// A file being written through the mount, staged on local disk until it is committed: a
// sparse file in the staging directory holding the bytes written here, plus the bytes of
// the remote version that were needed so far (fetched range by range, never the whole
// file up front). Which bytes are local is kept in an ExtentSet; the rest of
// [0, base_size) still lives only in the remote version.
//
// Not thread-safe: its owner (the file's state in BucketFs) serializes calls.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "common/result.h"
#include "common/unique_fd.h"
#include "mount/extent_set.h"

namespace xet {

// The directory staging files live in, reusing them: a file given back is truncated to
// nothing and handed out again, because creating and deleting one file per written file
// costs ext4 an inode allocation each (a quarter of the mount's CPU when extracting 10,000
// small files: docs/bench-log/mount.md). At most `keep` idle files are kept. Thread-safe.
class StagingDir {
 public:
  explicit StagingDir(std::string dir, size_t keep = 256);
  ~StagingDir();  // removes the idle files
  StagingDir(const StagingDir&) = delete;
  StagingDir& operator=(const StagingDir&) = delete;

  // An empty staging file and its path. IoError / InsufficientStorage when the directory
  // cannot take one.
  Result<std::pair<std::string, UniqueFd>> Take();
  // Takes a file back (emptied and kept, or removed).
  void Give(std::string path, UniqueFd fd);
  const std::string& dir() const { return dir_; }

 private:
  const std::string dir_;
  const size_t keep_;
  Mutex mu_;
  std::vector<std::pair<std::string, UniqueFd>> idle_ GUARDED_BY(mu_);
};

class StagedFile {
 public:
  // Reads bytes of the remote version: fills `out` from `offset` (the range lies within
  // the base size).
  using RemoteRead = std::function<Status(uint64_t offset, std::span<uint8_t> out)>;

  // A staged copy in `dir` of a file whose remote version has `base_size` bytes (0 for a
  // new file or one opened with O_TRUNC), empty and sparse. IoError / InsufficientStorage
  // when the staging directory cannot take it; EFBIG-class sizes are ResourceExhausted.
  // `dir` must outlive the object.
  static Result<std::unique_ptr<StagedFile>> Create(StagingDir& dir, uint64_t base_size);
  ~StagedFile();  // gives the staging file back
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;

  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Writes `data` at `offset` (past the end: the gap reads as zeros).
  Status Write(uint64_t offset, std::span<const uint8_t> data);
  // Sets the size: shrinking drops the bytes past it, growing adds zeros.
  Status Truncate(uint64_t size);
  // Reads up to out.size() bytes at `offset` (0 past the end); bytes of the remote version
  // not yet local are fetched with `remote` and kept.
  Result<size_t> Read(uint64_t offset, std::span<uint8_t> out, const RemoteRead& remote);
  // Makes every byte local (before the file is uploaded from its staging copy).
  Status FetchAll(const RemoteRead& remote);
  // Makes the bytes of [start, end) local (those of the remote version not local yet are
  // fetched with `remote`).
  Status Fetch(uint64_t start, uint64_t end, const RemoteRead& remote);
  // What differs from the remote version: its bytes [0, base_kept()) are still this file's
  // at the same offsets except within changed() (written, or zeros from growing the file);
  // every byte past base_kept() is new. (A partial upload sends only that: see
  // client/upload/partial_edit.h.)
  uint64_t base_kept() const { return base_size_; }
  std::vector<std::pair<uint64_t, uint64_t>> changed() const { return changed_.Extents(); }
  // The content as it is now became the remote version (a commit finished): nothing
  // differs any more, and the bytes not local are the new version's.
  void MarkCommitted();
  // Bytes of the remote version that are not local yet.
  uint64_t missing_bytes() const;

 private:
  StagedFile(StagingDir& dir, std::string path, UniqueFd fd, uint64_t base_size);
  Status FetchRange(uint64_t start, uint64_t end, const RemoteRead& remote);

  StagingDir& dir_;
  std::string path_;
  UniqueFd fd_;
  uint64_t base_size_;  // bytes [0, base_size_) not in local_ are the remote version's
  uint64_t size_;
  ExtentSet local_;
  ExtentSet changed_;  // bytes of [0, base_size_) that may differ from the remote version
};

}  // namespace xet
