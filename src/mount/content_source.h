// Where the mount reads committed file content from: the seam between the file system and
// the client's range reader (client/download), so the file system can be tested with
// content held in memory.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "common/result.h"
#include "format/hash.h"

namespace xet {

// One open file's reads. Read may be called from several threads at once.
class FileStream {
 public:
  virtual ~FileStream() = default;
  // Reads up to out.size() bytes at `offset`; returns how many (0 at or past the end). Fewer
  // than asked only at the end of the file.
  virtual Result<size_t> Read(uint64_t offset, std::span<uint8_t> out) = 0;
};

class ContentSource {
 public:
  virtual ~ContentSource() = default;
  // Starts preparing reads of the file (its reconstruction plan) in the background.
  virtual void Prefetch(const Hash& file, uint64_t size) = 0;
  virtual std::unique_ptr<FileStream> Open(const Hash& file, uint64_t size) = 0;
  // Like Open, for reads of scattered ranges that must fetch nothing else (no read-ahead).
  virtual std::unique_ptr<FileStream> OpenForRanges(const Hash& file, uint64_t size) {
    return Open(file, size);
  }
};

}  // namespace xet
