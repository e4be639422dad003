#include "mount/staged_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "common/errno_status.h"

namespace xet {

namespace {

// A size the staging file system refuses (ext4: 16 TiB) is the file's limit, not an I/O
// failure: EFBIG.
Status SizeStatus(std::string_view what, int err) {
  if (err == EFBIG) return Status::ResourceExhausted(std::string(what) + ": file too large");
  return StatusFromErrno(what, err);
}

Status PwriteAll(int fd, const uint8_t* data, size_t len, uint64_t offset) {
  while (len > 0) {
    const ssize_t n = ::pwrite(fd, data, len, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return SizeStatus("writing the staging file", errno);
    }
    data += n;
    len -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

Status PreadAll(int fd, uint8_t* data, size_t len, uint64_t offset) {
  while (len > 0) {
    const ssize_t n = ::pread(fd, data, len, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return StatusFromErrno("reading the staging file", errno);
    }
    if (n == 0) {  // a hole at the end of a sparse file reads as zeros
      std::fill(data, data + len, uint8_t{0});
      return Status::Ok();
    }
    data += n;
    len -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

}  // namespace

StagingDir::StagingDir(std::string dir, size_t keep) : dir_(std::move(dir)), keep_(keep) {}

StagingDir::~StagingDir() {
  MutexLock lock(mu_);
  for (auto& [path, fd] : idle_) ::unlink(path.c_str());
}

Result<std::pair<std::string, UniqueFd>> StagingDir::Take() {
  {
    MutexLock lock(mu_);
    if (!idle_.empty()) {
      auto file = std::move(idle_.back());
      idle_.pop_back();
      return file;
    }
  }
  std::string path = dir_ + "/staged-XXXXXX";
  const int fd = ::mkostemp(path.data(), O_CLOEXEC);
  if (fd < 0) return StatusFromErrno("creating a staging file in " + dir_, errno);
  return std::make_pair(std::move(path), UniqueFd(fd));
}

void StagingDir::Give(std::string path, UniqueFd fd) {
  if (::ftruncate(fd.get(), 0) == 0) {
    MutexLock lock(mu_);
    if (idle_.size() < keep_) {
      idle_.emplace_back(std::move(path), std::move(fd));
      return;
    }
  }
  ::unlink(path.c_str());
}

Result<std::unique_ptr<StagedFile>> StagedFile::Create(StagingDir& dir, uint64_t base_size) {
  XET_ASSIGN_OR_RETURN(auto file, dir.Take());
  if (::ftruncate(file.second.get(), static_cast<off_t>(base_size)) != 0) {
    const int err = errno;
    dir.Give(std::move(file.first), std::move(file.second));
    return SizeStatus("sizing the staging file", err);
  }
  return std::unique_ptr<StagedFile>(
      new StagedFile(dir, std::move(file.first), std::move(file.second), base_size));
}

StagedFile::StagedFile(StagingDir& dir, std::string path, UniqueFd fd, uint64_t base_size)
    : dir_(dir),
      path_(std::move(path)),
      fd_(std::move(fd)),
      base_size_(base_size),
      size_(base_size) {}

StagedFile::~StagedFile() { dir_.Give(std::move(path_), std::move(fd_)); }

Status StagedFile::Write(uint64_t offset, std::span<const uint8_t> data) {
  XET_RETURN_IF_ERROR(PwriteAll(fd_.get(), data.data(), data.size(), offset));
  if (offset > size_) local_.Add(size_, offset);  // the gap is zeros, not remote bytes
  local_.Add(offset, offset + data.size());
  changed_.Add(std::min(offset, size_), offset + data.size());
  size_ = std::max<uint64_t>(size_, offset + data.size());
  return Status::Ok();
}

Status StagedFile::Truncate(uint64_t size) {
  if (::ftruncate(fd_.get(), static_cast<off_t>(size)) != 0) {
    return SizeStatus("truncating the staging file", errno);
  }
  if (size < size_) {
    local_.TruncateTo(size);
    changed_.TruncateTo(size);
    base_size_ = std::min(base_size_, size);
  } else {
    local_.Add(size_, size);
    changed_.Add(size_, size);
  }
  size_ = size;
  return Status::Ok();
}

Status StagedFile::FetchRange(uint64_t start, uint64_t end, const RemoteRead& remote) {
  constexpr uint64_t kPiece = 8ull << 20;
  std::vector<uint8_t> buf;
  for (const auto& [gap_start, gap_end] : local_.Gaps(start, std::min(end, base_size_))) {
    for (uint64_t pos = gap_start; pos < gap_end; pos += kPiece) {
      const uint64_t n = std::min(kPiece, gap_end - pos);
      buf.resize(n);
      XET_RETURN_IF_ERROR(remote(pos, buf));
      XET_RETURN_IF_ERROR(PwriteAll(fd_.get(), buf.data(), buf.size(), pos));
      local_.Add(pos, pos + n);
    }
  }
  return Status::Ok();
}

Result<size_t> StagedFile::Read(uint64_t offset, std::span<uint8_t> out, const RemoteRead& remote) {
  if (offset >= size_) return size_t{0};
  const size_t n = static_cast<size_t>(std::min<uint64_t>(out.size(), size_ - offset));
  XET_RETURN_IF_ERROR(FetchRange(offset, offset + n, remote));
  XET_RETURN_IF_ERROR(PreadAll(fd_.get(), out.data(), n, offset));
  return n;
}

Status StagedFile::FetchAll(const RemoteRead& remote) { return FetchRange(0, size_, remote); }

Status StagedFile::Fetch(uint64_t start, uint64_t end, const RemoteRead& remote) {
  return FetchRange(start, std::min(end, size_), remote);
}

void StagedFile::MarkCommitted() {
  changed_.Clear();
  base_size_ = size_;
}

uint64_t StagedFile::missing_bytes() const {
  uint64_t n = 0;
  for (const auto& [s, e] : local_.Gaps(0, std::min(size_, base_size_))) n += e - s;
  return n;
}

}  // namespace xet
