#include "client/download/part_file.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"

namespace xet {
namespace {

Status Errno(const std::string& what) {
  return Status::IoError(what + ": " + std::strerror(errno));
}

constexpr int kSidecarVersion = 1;

std::string ChunksToHex(const std::vector<ChunkInfo>& chunks) {
  std::string out;
  out.reserve(chunks.size() * 80);
  char size_hex[17];
  for (const ChunkInfo& c : chunks) {
    out += c.hash.ToRawHex();
    std::snprintf(size_hex, sizeof size_hex, "%016llx", static_cast<unsigned long long>(c.size));
    out.append(size_hex, 16);
  }
  return out;
}

Result<std::vector<ChunkInfo>> ChunksFromHex(const std::string& hex) {
  if (hex.size() % 80 != 0) return Status::InvalidArgument("sidecar: bad chunk list length");
  std::vector<ChunkInfo> out;
  out.reserve(hex.size() / 80);
  for (size_t i = 0; i < hex.size(); i += 80) {
    auto h = Hash::FromRawHex(std::string_view(hex).substr(i, 64));
    if (!h) return Status::InvalidArgument("sidecar: bad chunk hash");
    uint64_t size = 0;
    for (size_t j = i + 64; j < i + 80; ++j) {
      const char ch = hex[j];
      int v = 0;
      if (ch >= '0' && ch <= '9') {
        v = ch - '0';
      } else if (ch >= 'a' && ch <= 'f') {
        v = ch - 'a' + 10;
      } else {
        return Status::InvalidArgument("sidecar: bad chunk size");
      }
      size = size << 4 | static_cast<uint64_t>(v);
    }
    out.push_back({*h, size});
  }
  return out;
}

Status FsyncDir(const std::string& path) {
  const std::filesystem::path p(path);
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("open " + dir);
  const int rc = ::fsync(fd);
  const Status st = rc == 0 ? Status::Ok() : Errno("fsync " + dir);
  ::close(fd);
  return st;
}

}  // namespace

std::string SerializeSidecar(const PartSidecar& s) {
  nlohmann::json blocks = nlohmann::json::array();
  for (const auto& [index, chunks] : s.done) {
    blocks.push_back({{"index", index}, {"chunks", ChunksToHex(chunks)}});
  }
  nlohmann::json j = {{"version", kSidecarVersion},
                      {"file_hash", s.file_hash.ToHex()},
                      {"size", s.size},
                      {"block_bytes", s.block_bytes},
                      {"blocks", std::move(blocks)}};
  return j.dump();
}

Result<PartSidecar> ParseSidecar(const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::InvalidArgument("sidecar: not JSON");
  try {
    if (j.at("version").get<int>() != kSidecarVersion) {
      return Status::InvalidArgument("sidecar: unknown version");
    }
    PartSidecar s;
    auto h = Hash::FromHex(j.at("file_hash").get<std::string>());
    if (!h) return Status::InvalidArgument("sidecar: bad file hash");
    s.file_hash = *h;
    s.size = j.at("size").get<uint64_t>();
    s.block_bytes = j.at("block_bytes").get<uint64_t>();
    for (const auto& b : j.at("blocks")) {
      XET_ASSIGN_OR_RETURN(auto chunks, ChunksFromHex(b.at("chunks").get<std::string>()));
      s.done[b.at("index").get<uint64_t>()] = std::move(chunks);
    }
    return s;
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("sidecar: ") + e.what());
  }
}

bool PartFile::IsPartOrSidecarPath(std::string_view path) {
  if (path.ends_with(".xetpart") || path.ends_with(".xetpart.json")) return true;
  const size_t slash = path.rfind('/');
  const auto target =
      AtomicWriteTarget(slash == std::string_view::npos ? path : path.substr(slash + 1));
  return target && target->ends_with(".xetpart.json");
}

Result<std::unique_ptr<PartFile>> PartFile::Open(const std::string& dest, const Hash& file_hash,
                                                 uint64_t size, uint64_t block_bytes) {
  const std::string part = PartPath(dest);
  const std::string side = SidecarPath(dest);
  RemoveStaleAtomicWriteTemporaries(side);
  // Resume?
  if (auto text = ReadSmallFile(side, size_t{1} << 30); text.ok()) {
    auto parsed = ParseSidecar(*text);
    struct stat st {};
    if (parsed.ok() && parsed->file_hash == file_hash && parsed->size == size &&
        parsed->block_bytes == block_bytes && ::stat(part.c_str(), &st) == 0 &&
        static_cast<uint64_t>(st.st_size) == size) {
      const int fd = ::open(part.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd >= 0) {
        std::unique_ptr<PartFile> pf(new PartFile(dest, fd, std::move(*parsed), true));
        pf->OpenDirect();
        return pf;
      }
    }
  }
  // Fresh: the sidecar first (so a stale one never describes the new partial file).
  ::unlink(side.c_str());
  const int fd = ::open(part.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("create " + part);
  std::unique_ptr<PartFile> pf(
      new PartFile(dest, fd, PartSidecar{file_hash, size, block_bytes, {}}, false));
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) return Errno("truncate " + part);
  XET_RETURN_IF_ERROR(WriteFileAtomically(side, SerializeSidecar(pf->sidecar_), 0644));
  pf->OpenDirect();
  return pf;
}

void PartFile::OpenDirect() {
  direct_fd_ = ::open(PartPath(dest_).c_str(), O_WRONLY | O_DIRECT | O_CLOEXEC);
}

PartFile::~PartFile() {
  if (fd_ >= 0) ::close(fd_);
  if (direct_fd_ >= 0) ::close(direct_fd_);
}

Status PartFile::WriteAlignedAt(std::span<const uint8_t> data, uint64_t offset) {
  while (!data.empty() && direct_fd_ >= 0 && direct_ok_.load(std::memory_order_relaxed) &&
         reinterpret_cast<uintptr_t>(data.data()) % kDirectAlign == 0 &&
         data.size() % kDirectAlign == 0 && offset % kDirectAlign == 0) {
    const ssize_t w = ::pwrite(direct_fd_, data.data(), data.size(), static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EINVAL) {
      direct_ok_.store(false, std::memory_order_relaxed);  // not for this file system
      break;
    }
    if (w < 0) return Errno("write " + PartPath(dest_));
    if (w == 0) return Status::IoError("write " + PartPath(dest_) + ": no progress");
    data = data.subspan(static_cast<size_t>(w));
    offset += static_cast<uint64_t>(w);
  }
  if (data.empty()) return Status::Ok();
  const iovec v{const_cast<uint8_t*>(data.data()), data.size()};
  return WriteAt(std::span<const iovec>(&v, 1), offset);
}

Status PartFile::WriteAt(std::span<const iovec> buffers, uint64_t offset) {
  std::vector<iovec> rest;  // only copied when a write comes back short
  std::span<const iovec> todo = buffers;
  while (!todo.empty()) {
    const int n = static_cast<int>(std::min<size_t>(todo.size(), IOV_MAX));
    const ssize_t w = ::pwritev(fd_, todo.data(), n, static_cast<off_t>(offset));
    if (w < 0) {
      if (errno == EINTR) continue;
      return Errno("write " + PartPath(dest_));
    }
    if (w == 0) return Status::IoError("write " + PartPath(dest_) + ": no progress");
    offset += static_cast<uint64_t>(w);
    auto left = static_cast<size_t>(w);
    size_t i = 0;
    while (i < todo.size() && left >= todo[i].iov_len) left -= todo[i++].iov_len;
    if (left == 0) {
      todo = todo.subspan(i);
      continue;
    }
    std::vector<iovec> next(todo.begin() + static_cast<std::ptrdiff_t>(i), todo.end());
    next[0].iov_base = static_cast<char*>(next[0].iov_base) + left;
    next[0].iov_len -= left;
    rest.swap(next);
    todo = rest;
  }
  return Status::Ok();
}

void PartFile::RecordDone(uint64_t block, std::vector<ChunkInfo> chunks) {
  sidecar_.done[block] = std::move(chunks);
  unsaved_ = true;
}

Status PartFile::Checkpoint() {
  if (!unsaved_) return Status::Ok();
  if (::fdatasync(fd_) != 0) return Errno("fdatasync " + PartPath(dest_));
  XET_RETURN_IF_ERROR(WriteFileAtomically(SidecarPath(dest_), SerializeSidecar(sidecar_), 0644));
  unsaved_ = false;
  return Status::Ok();
}

std::vector<ChunkInfo> PartFile::AllChunks() const {
  std::vector<ChunkInfo> out;
  size_t n = 0;
  for (const auto& [i, c] : sidecar_.done) n += c.size();
  out.reserve(n);
  for (const auto& [i, c] : sidecar_.done) out.insert(out.end(), c.begin(), c.end());
  return out;
}

Status PartFile::Commit() {
  const std::string part = PartPath(dest_);
  if (direct_fd_ >= 0) ::close(direct_fd_);
  direct_fd_ = -1;
  if (::fsync(fd_) != 0) return Errno("fsync " + part);
  if (::close(fd_) != 0) {
    fd_ = -1;
    return Errno("close " + part);
  }
  fd_ = -1;
  if (::rename(part.c_str(), dest_.c_str()) != 0) return Errno("rename " + part);
  XET_RETURN_IF_ERROR(FsyncDir(dest_));
  ::unlink(SidecarPath(dest_).c_str());
  return Status::Ok();
}

void PartFile::Discard() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (direct_fd_ >= 0) ::close(direct_fd_);
  direct_fd_ = -1;
  ::unlink(PartPath(dest_).c_str());
  ::unlink(SidecarPath(dest_).c_str());
}

}  // namespace xet
