// ByteSource: a sequential reader of bytes, the I/O seam (like LevelDB's Env) that lets
// pipelines read files, stdin or in-memory buffers, and lets tests inject failures.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "common/result.h"

namespace xet {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to buf.size() bytes. Returns the count read; 0 only at end of stream.
  virtual Result<size_t> Read(std::span<uint8_t> buf) = 0;
};

// Opens `path` for reading; "-" means standard input. Errors name the path.
Result<std::unique_ptr<ByteSource>> OpenFileSource(const std::string& path);
// Bytes [offset, offset + length) of the file at `path` (read with pread: several sources
// may read one file at once). A file shorter than that is an IoError when reached.
Result<std::unique_ptr<ByteSource>> OpenFileRangeSource(const std::string& path, uint64_t offset,
                                                        uint64_t length);

// A source over memory the caller keeps alive.
class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::span<const uint8_t> data) : data_(data) {}
  Result<size_t> Read(std::span<uint8_t> buf) override;

 private:
  std::span<const uint8_t> data_;
  size_t pos_ = 0;
};

}  // namespace xet
