#include "common/byte_source.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace xet {
namespace {

class FdSource final : public ByteSource {
 public:
  FdSource(int fd, std::string name, bool owned) : fd_(fd), name_(std::move(name)), owned_(owned) {}
  ~FdSource() override {
    if (owned_) ::close(fd_);
  }
  FdSource(const FdSource&) = delete;
  FdSource& operator=(const FdSource&) = delete;

  Result<size_t> Read(std::span<uint8_t> buf) override {
    size_t total = 0;
    // Fill the buffer as far as the stream allows, so callers see large blocks from pipes.
    while (total < buf.size()) {
      const ssize_t n = ::read(fd_, buf.data() + total, buf.size() - total);
      if (n < 0) {
        if (errno == EINTR) continue;
        return Status::IoError("read " + name_ + ": " + std::strerror(errno));
      }
      if (n == 0) break;
      total += static_cast<size_t>(n);
    }
    return total;
  }

 private:
  int fd_;
  std::string name_;
  bool owned_;
};

// Bytes [offset, offset + length) of a file, read with pread (so one file may have several
// sources at once).
class FileRangeSource final : public ByteSource {
 public:
  FileRangeSource(int fd, std::string name, uint64_t offset, uint64_t length)
      : fd_(fd), name_(std::move(name)), offset_(offset), left_(length) {}
  ~FileRangeSource() override { ::close(fd_); }
  FileRangeSource(const FileRangeSource&) = delete;
  FileRangeSource& operator=(const FileRangeSource&) = delete;

  Result<size_t> Read(std::span<uint8_t> buf) override {
    size_t total = 0;
    const size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), left_));
    while (total < want) {
      const ssize_t n =
          ::pread(fd_, buf.data() + total, want - total, static_cast<off_t>(offset_ + total));
      if (n < 0) {
        if (errno == EINTR) continue;
        return Status::IoError("read " + name_ + ": " + std::strerror(errno));
      }
      if (n == 0) return Status::IoError("read " + name_ + ": the file ended early");
      total += static_cast<size_t>(n);
    }
    offset_ += total;
    left_ -= total;
    return total;
  }

 private:
  int fd_;
  std::string name_;
  uint64_t offset_;
  uint64_t left_;
};

Result<int> OpenForReading(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return Status::NotFound(path + ": no such file");
    return Status::IoError(path + ": " + std::strerror(err));
  }
  return fd;
}

}  // namespace

Result<std::unique_ptr<ByteSource>> OpenFileRangeSource(const std::string& path, uint64_t offset,
                                                        uint64_t length) {
  XET_ASSIGN_OR_RETURN(const int fd, OpenForReading(path));
  return std::unique_ptr<ByteSource>(new FileRangeSource(fd, path, offset, length));
}

Result<std::unique_ptr<ByteSource>> OpenFileSource(const std::string& path) {
  if (path == "-") return std::unique_ptr<ByteSource>(new FdSource(0, "stdin", false));
  XET_ASSIGN_OR_RETURN(const int fd, OpenForReading(path));
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return std::unique_ptr<ByteSource>(new FdSource(fd, path, true));
}

Result<size_t> MemorySource::Read(std::span<uint8_t> buf) {
  const size_t n = std::min(buf.size(), data_.size() - pos_);
  if (n == 0) return n;  // memcpy forbids null pointers even for 0 bytes (empty spans)
  std::memcpy(buf.data(), data_.data() + pos_, n);
  pos_ += n;
  return n;
}

}  // namespace xet
