#include "store/local/local_object_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <system_error>

#include "common/errno_status.h"
#include "common/huge_pages.h"
#include "common/uninitialized_buffer.h"
#include "common/unique_fd.h"

namespace xet {
namespace {

constexpr std::string_view kTempPrefix = ".tmp-";

Status ErrnoStatus(std::string_view op, std::string_view what, int err) {
  std::string msg;
  msg.append(op).append(" ").append(what);
  if (err == ENOENT) return Status::NotFound(msg + ": " + std::strerror(err));
  return StatusFromErrno(msg, err);
}

// The directory part of a key ("" for a top-level key) and its last segment.
std::string_view DirOf(std::string_view key) {
  const size_t slash = key.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : key.substr(0, slash);
}
std::string_view BaseOf(std::string_view key) {
  const size_t slash = key.rfind('/');
  return slash == std::string_view::npos ? key : key.substr(slash + 1);
}

Status FsyncPath(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus("open directory", path, errno);
  if (::fsync(fd.get()) != 0) return ErrnoStatus("fsync directory", path, errno);
  return Status::Ok();
}

Status PwriteAll(int fd, std::span<const uint8_t> data, uint64_t offset, std::string_view what) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n =
        ::pwrite(fd, data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("write", what, errno);
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

using Parts = std::span<const std::span<const uint8_t>>;

Status WriteBuffered(int fd, Parts parts, std::string_view what) {
  uint64_t offset = 0;
  for (const auto& part : parts) {
    XET_RETURN_IF_ERROR(PwriteAll(fd, part, offset, what));
    offset += part.size();
  }
  return Status::Ok();
}

// Objects this large skip the page cache: writing them through it makes the kernel fault in
// and copy into fresh cache pages (as much CPU as verifying a xorb), and nothing reads a new
// object back soon. Direct I/O needs aligned memory, offsets and lengths, so the bytes go
// through an aligned bounce buffer; the unaligned tail is written buffered.
constexpr uint64_t kDirectWriteMinBytes = 1 << 20;
constexpr size_t kDirectAlign = 4096;  // covers 512-byte and 4 KiB logical blocks
constexpr size_t kBounceBytes = 4 << 20;

// Copies the bytes at `offset` of the concatenation of `parts` into `out`.
Status CopyFromParts(Parts parts, uint64_t offset, std::span<uint8_t> out) {
  size_t done = 0;
  for (const auto& part : parts) {
    if (done == out.size()) break;
    if (offset >= part.size()) {
      offset -= part.size();
      continue;
    }
    const size_t n = std::min<uint64_t>(part.size() - offset, out.size() - done);
    std::memcpy(out.data() + done, part.data() + offset, n);
    done += n;
    offset = 0;
  }
  if (done != out.size()) return Status::Internal("object parts shorter than their total");
  return Status::Ok();
}

// Writes the `total` bytes `read` produces with O_DIRECT. Sets *unsupported (and writes
// nothing) when the file system refuses direct I/O, so the caller can write buffered instead.
Status WriteDirect(int fd, uint64_t total, const ObjectPieceReader& read, std::string_view what,
                   bool* unsupported) {
  *unsupported = false;
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) return ErrnoStatus("fcntl", what, errno);
  const uint64_t rounded = (total + kDirectAlign - 1) / kDirectAlign * kDirectAlign;
  PageAlignedBuffer bounce(static_cast<size_t>(std::min<uint64_t>(kBounceBytes, rounded)));
  if (bounce.data() == nullptr || ::fcntl(fd, F_SETFL, flags | O_DIRECT) != 0) {
    *unsupported = true;
    return Status::Ok();
  }
  uint64_t offset = 0;  // of the bounce buffer's first byte
  while (true) {
    const size_t fill = static_cast<size_t>(std::min<uint64_t>(bounce.size(), total - offset));
    XET_RETURN_IF_ERROR(read(offset, bounce.span().subspan(0, fill)));
    const size_t aligned = fill - fill % kDirectAlign;
    size_t done = 0;
    while (done < aligned) {
      const ssize_t n =
          ::pwrite(fd, bounce.data() + done, aligned - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EINVAL && offset + done == 0) {
        *unsupported = true;  // a file system that takes the flag but not the I/O
        return Status::Ok();
      }
      if (n <= 0) return ErrnoStatus("write", what, n < 0 ? errno : EIO);
      done += static_cast<size_t>(n);
    }
    offset += aligned;
    if (aligned < bounce.size()) {  // the end: the unaligned tail goes buffered
      if (::fcntl(fd, F_SETFL, flags) != 0) return ErrnoStatus("fcntl", what, errno);
      return PwriteAll(fd, bounce.span().subspan(aligned, fill - aligned), offset, what);
    }
    if (offset == total) break;
  }
  if (::fcntl(fd, F_SETFL, flags) != 0) return ErrnoStatus("fcntl", what, errno);
  return Status::Ok();
}

// Clears O_DIRECT again after WriteDirect found it unsupported.
Status ClearDirect(int fd, std::string_view what) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_DIRECT) != 0) {
    return ErrnoStatus("fcntl", what, errno);
  }
  return Status::Ok();
}

// Writes the concatenation of `parts` into the empty file `fd`.
Status WriteParts(int fd, Parts parts, std::string_view what) {
  uint64_t total = 0;
  for (const auto& part : parts) total += part.size();
  if (total >= kDirectWriteMinBytes) {
    bool unsupported = false;
    XET_RETURN_IF_ERROR(WriteDirect(
        fd, total,
        [parts](uint64_t offset, std::span<uint8_t> out) {
          return CopyFromParts(parts, offset, out);
        },
        what, &unsupported));
    if (!unsupported) return Status::Ok();
    XET_RETURN_IF_ERROR(ClearDirect(fd, what));
  }
  return WriteBuffered(fd, parts, what);
}

// Writes the `total` bytes `read` produces into the empty file `fd`, a piece at a time.
Status WriteFrom(int fd, uint64_t total, const ObjectPieceReader& read, std::string_view what) {
  if (total >= kDirectWriteMinBytes) {
    bool unsupported = false;
    XET_RETURN_IF_ERROR(WriteDirect(fd, total, read, what, &unsupported));
    if (!unsupported) return Status::Ok();
    XET_RETURN_IF_ERROR(ClearDirect(fd, what));
  }
  UninitializedBytes buffer(static_cast<size_t>(std::min<uint64_t>(total, kBounceBytes)));
  for (uint64_t offset = 0; offset < total;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(buffer.size(), total - offset));
    const std::span<uint8_t> piece(buffer.data(), n);
    XET_RETURN_IF_ERROR(read(offset, piece));
    XET_RETURN_IF_ERROR(PwriteAll(fd, piece, offset, what));
    offset += n;
  }
  return Status::Ok();
}

Status PreadAll(int fd, uint64_t offset, std::span<uint8_t> out, std::string_view what) {
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n =
        ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("read", what, errno);
    }
    if (n == 0) return Status::OutOfRange("object " + std::string(what) + " shrank while read");
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

// Opens an object for reading and returns its descriptor and size.
Status OpenForRead(const std::string& path, std::string_view key, UniqueFd* fd, uint64_t* size) {
  fd->Reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd->valid()) return ErrnoStatus("open object", key, errno);
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return ErrnoStatus("stat object", key, errno);
  if (!S_ISREG(st.st_mode))
    return Status::NotFound("object " + std::string(key) + " is not a file");
  *size = static_cast<uint64_t>(st.st_size);
  return Status::Ok();
}

// Removes every ".tmp-*" file under `dir` (recursively).
Status RemoveTempFiles(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::recursive_directory_iterator it(dir, ec), end;
  if (ec) return Status::IoError("list " + dir.string() + ": " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) return Status::IoError("list " + dir.string() + ": " + ec.message());
    const std::string name = it->path().filename().string();
    if (name.starts_with(kTempPrefix) && !it->is_directory(ec)) {
      if (::unlink(it->path().c_str()) != 0 && errno != ENOENT) {
        return ErrnoStatus("remove temporary file", it->path().string(), errno);
      }
    }
  }
  if (ec) return Status::IoError("list " + dir.string() + ": " + ec.message());
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<ObjectStore>> OpenLocalObjectStore(const std::string& root) {
  XET_ASSIGN_OR_RETURN(auto store, LocalObjectStore::Open(root));
  return std::unique_ptr<ObjectStore>(std::move(store));
}

Result<std::unique_ptr<LocalObjectStore>> LocalObjectStore::Open(const std::string& root) {
  if (root.empty()) return Status::InvalidArgument("object store root is empty");
  std::string clean = root;
  while (clean.size() > 1 && clean.back() == '/') clean.pop_back();
  std::error_code ec;
  std::filesystem::create_directories(clean, ec);
  if (ec) return StatusFromErrno("create object store root " + clean, ec.value());
  if (!std::filesystem::is_directory(clean, ec)) {
    return Status::InvalidArgument("object store root " + clean + " is not a directory");
  }
  // The root's own entry must be durable in its parent before any object is.
  const std::filesystem::path parent = std::filesystem::absolute(clean, ec).parent_path();
  if (!ec && !parent.empty()) XET_RETURN_IF_ERROR(FsyncPath(parent.string()));
  XET_RETURN_IF_ERROR(RemoveTempFiles(clean));
  XET_RETURN_IF_ERROR(FsyncPath(clean));
  std::random_device rd;
  const uint64_t nonce =
      (static_cast<uint64_t>(rd()) << 32) ^ rd() ^ (static_cast<uint64_t>(::getpid()) << 16);
  return std::unique_ptr<LocalObjectStore>(new LocalObjectStore(std::move(clean), nonce));
}

Status LocalObjectStore::EnsureDurableDir(const std::string& rel_dir) {
  {
    MutexLock lock(mu_);
    if (rel_dir.empty() || durable_dirs_.contains(rel_dir)) return Status::Ok();
  }
  // Walk down from the root: create each level, then fsync its parent so the entry is
  // durable. Concurrent callers may both do this; mkdir's EEXIST and a repeated fsync are
  // harmless.
  size_t pos = 0;
  while (true) {
    const size_t slash = rel_dir.find('/', pos);
    const std::string level = rel_dir.substr(0, slash);
    bool known;
    {
      MutexLock lock(mu_);
      known = durable_dirs_.contains(level);
    }
    if (!known) {
      const std::string path = root_ + "/" + level;
      if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
        return ErrnoStatus("create directory", path, errno);
      }
      const size_t parent_slash = level.rfind('/');
      const std::string parent =
          parent_slash == std::string::npos ? root_ : root_ + "/" + level.substr(0, parent_slash);
      XET_RETURN_IF_ERROR(FsyncPath(parent));
      MutexLock lock(mu_);
      durable_dirs_.insert(level);
    }
    if (slash == std::string::npos) break;
    pos = slash + 1;
  }
  return Status::Ok();
}

std::string LocalObjectStore::TempName(std::string_view base) {
  uint64_t n;
  {
    MutexLock lock(mu_);
    n = ++temp_counter_;
  }
  char suffix[64];
  std::snprintf(suffix, sizeof(suffix), "-%016llx-%llu", static_cast<unsigned long long>(nonce_),
                static_cast<unsigned long long>(n));
  std::string name(kTempPrefix);
  name.append(base.substr(0, 64)).append(suffix);
  return name;
}

Status LocalObjectStore::SyncDir(const std::string& dir_path) {
  FsyncGroup* group;
  {
    MutexLock lock(mu_);
    auto& slot = dir_syncs_[dir_path];
    if (!slot) slot = std::make_unique<FsyncGroup>([dir_path] { return FsyncPath(dir_path); });
    group = slot.get();
  }
  return group->Sync();
}

Result<bool> LocalObjectStore::Put(std::string_view key, std::span<const uint8_t> data) {
  const std::span<const uint8_t> parts[] = {data};
  return PutParts(key, parts);
}

Result<bool> LocalObjectStore::PutParts(std::string_view key,
                                        std::span<const std::span<const uint8_t>> parts) {
  return PutWith(key, [&](int fd) { return WriteParts(fd, parts, key); });
}

Result<bool> LocalObjectStore::PutFrom(std::string_view key, uint64_t size,
                                       const ObjectPieceReader& read) {
  return PutWith(key, [&](int fd) { return WriteFrom(fd, size, read, key); });
}

Result<bool> LocalObjectStore::PutWith(std::string_view key,
                                       const std::function<Status(int fd)>& write) {
  XET_RETURN_IF_ERROR(ValidateObjectKey(key));
  const std::string final_path = root_ + "/" + std::string(key);
  struct stat st {};
  if (::stat(final_path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) {
      return Status::InvalidArgument("object key " + std::string(key) + " names a directory");
    }
    return false;  // never overwrite
  }

  const std::string rel_dir(DirOf(key));
  XET_RETURN_IF_ERROR(EnsureDurableDir(rel_dir));
  const std::string dir_path = rel_dir.empty() ? root_ : root_ + "/" + rel_dir;

  std::string temp_path;
  UniqueFd fd;
  for (int attempt = 0; attempt < 16 && !fd.valid(); ++attempt) {
    temp_path = dir_path + "/" + TempName(BaseOf(key));
    fd.Reset(::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (!fd.valid() && errno != EEXIST) return ErrnoStatus("create temporary file for", key, errno);
  }
  if (!fd.valid()) return Status::IoError("no unique temporary name for " + std::string(key));

  // From here on the temporary file must not survive an error.
  auto drop_temp = [&](Status error) {
    fd.Reset();
    ::unlink(temp_path.c_str());
    return error;
  };
  Status written = write(fd.get());
  if (!written.ok()) return drop_temp(written);
  if (::fsync(fd.get()) != 0) return drop_temp(ErrnoStatus("fsync", key, errno));
  if (fd.Reset() != 0) return drop_temp(ErrnoStatus("close", key, errno));

  bool created = true;
  if (::link(temp_path.c_str(), final_path.c_str()) != 0) {
    if (errno != EEXIST) return drop_temp(ErrnoStatus("link object", key, errno));
    created = false;  // another writer finished first: its object stands
  }
  if (::unlink(temp_path.c_str()) != 0 && errno != ENOENT) {
    return ErrnoStatus("remove temporary file for", key, errno);
  }
  if (created) XET_RETURN_IF_ERROR(SyncDir(dir_path));
  return created;
}

Result<uint64_t> LocalObjectStore::Size(std::string_view key) {
  XET_RETURN_IF_ERROR(ValidateObjectKey(key));
  const std::string path = root_ + "/" + std::string(key);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return ErrnoStatus("stat object", key, errno);
  if (!S_ISREG(st.st_mode))
    return Status::NotFound("object " + std::string(key) + " is not a file");
  return static_cast<uint64_t>(st.st_size);
}

Status LocalObjectStore::ReadRange(std::string_view key, uint64_t offset, std::span<uint8_t> out) {
  XET_RETURN_IF_ERROR(ValidateObjectKey(key));
  UniqueFd fd;
  uint64_t size = 0;
  XET_RETURN_IF_ERROR(OpenForRead(root_ + "/" + std::string(key), key, &fd, &size));
  if (offset > size || out.size() > size - offset) {
    return Status::OutOfRange("range [" + std::to_string(offset) + ", " + std::to_string(offset) +
                              "+" + std::to_string(out.size()) + ") outside object " +
                              std::string(key) + " of " + std::to_string(size) + " bytes");
  }
  return PreadAll(fd.get(), offset, out, key);
}

Result<UniqueFd> LocalObjectStore::OpenFile(std::string_view key) {
  XET_RETURN_IF_ERROR(ValidateObjectKey(key));
  UniqueFd fd;
  uint64_t size = 0;
  XET_RETURN_IF_ERROR(OpenForRead(root_ + "/" + std::string(key), key, &fd, &size));
  return fd;
}

Result<std::vector<uint8_t>> LocalObjectStore::Get(std::string_view key) {
  XET_RETURN_IF_ERROR(ValidateObjectKey(key));
  UniqueFd fd;
  uint64_t size = 0;
  XET_RETURN_IF_ERROR(OpenForRead(root_ + "/" + std::string(key), key, &fd, &size));
  std::vector<uint8_t> bytes(size);
  XET_RETURN_IF_ERROR(PreadAll(fd.get(), 0, bytes, key));
  return bytes;
}

Status LocalObjectStore::Delete(std::string_view key) {
  XET_RETURN_IF_ERROR(ValidateObjectKey(key));
  const std::string path = root_ + "/" + std::string(key);
  if (::unlink(path.c_str()) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return ErrnoStatus("delete object", key, errno);
  }
  const std::string rel_dir(DirOf(key));
  return FsyncPath(rel_dir.empty() ? root_ : root_ + "/" + rel_dir);
}

Status LocalObjectStore::List(
    std::string_view prefix,
    const std::function<Status(std::string_view key, uint64_t size)>& visit) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::recursive_directory_iterator it(root_, ec), end;
  if (ec) return StatusFromErrno("list " + root_, ec.value());
  const size_t root_len = root_.size() + 1;
  for (; it != end; it.increment(ec)) {
    if (ec) return StatusFromErrno("list " + root_, ec.value());
    const std::string path = it->path().string();
    const std::string_view name = BaseOf(path);
    if (name.starts_with('.')) {  // temporary files, and nothing below a dot-directory
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec)) continue;
    const std::string_view key = std::string_view(path).substr(root_len);
    if (!key.starts_with(prefix) || !ValidateObjectKey(key).ok()) continue;
    const uint64_t size = it->file_size(ec);
    if (ec) {
      if (ec == std::errc::no_such_file_or_directory) continue;  // deleted meanwhile
      return StatusFromErrno("size of " + path, ec.value());
    }
    XET_RETURN_IF_ERROR(visit(key, size));
  }
  return Status::Ok();
}

}  // namespace xet
