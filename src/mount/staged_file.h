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

#include "common/result.h"
#include "common/unique_fd.h"
#include "mount/extent_set.h"

namespace xet {

class StagedFile {
 public:
  // Reads bytes of the remote version: fills `out` from `offset` (the range lies within
  // the base size).
  using RemoteRead = std::function<Status(uint64_t offset, std::span<uint8_t> out)>;

  // A staged copy in `dir` of a file whose remote version has `base_size` bytes (0 for a
  // new file or one opened with O_TRUNC), created empty and sparse. IoError /
  // InsufficientStorage when the staging directory cannot take it.
  static Result<std::unique_ptr<StagedFile>> Create(const std::string& dir, uint64_t base_size);
  ~StagedFile();  // removes the staging file
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
  // Bytes of the remote version that are not local yet.
  uint64_t missing_bytes() const;

 private:
  StagedFile(std::string path, UniqueFd fd, uint64_t base_size);
  Status FetchRange(uint64_t start, uint64_t end, const RemoteRead& remote);

  std::string path_;
  UniqueFd fd_;
  uint64_t base_size_;  // bytes [0, base_size_) not in local_ are the remote version's
  uint64_t size_;
  ExtentSet local_;
};

}  // namespace xet
