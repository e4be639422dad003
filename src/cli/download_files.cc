#include "cli/download_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <system_error>

#include "cli/output.h"
#include "client/downloader.h"
#include "client/file_hasher.h"

namespace xet::cli {
namespace {

namespace fs = std::filesystem;

// The directory a destination file is created in.
fs::path ParentOf(const std::string& local_path) {
  fs::path parent = fs::path(local_path).parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

// Creates the destinations' directories and checks each file system has room for the bytes
// going to it (files already complete are counted too: their .xetpart is rewritten).
Status PrepareDestinations(std::span<const DownloadJob> jobs) {
  std::map<fs::path, uint64_t> bytes_per_dir;
  for (const DownloadJob& job : jobs) bytes_per_dir[ParentOf(job.local_path)] += job.file.size;
  std::map<unsigned long, std::pair<uint64_t, uint64_t>> per_fs;  // fsid -> (needed, available)
  std::map<unsigned long, std::string> fs_dir;
  for (const auto& [dir, bytes] : bytes_per_dir) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return Status::IoError("create directory " + dir.string() + ": " + ec.message());
    struct statvfs sv {};
    if (::statvfs(dir.c_str(), &sv) != 0) {
      return Status::IoError("statvfs " + dir.string() + ": " + std::strerror(errno));
    }
    auto& [needed, available] = per_fs[sv.f_fsid];
    needed += bytes;
    available = static_cast<uint64_t>(sv.f_bavail) * sv.f_frsize;
    fs_dir.emplace(sv.f_fsid, dir.string());
  }
  for (const auto& [fsid, need] : per_fs) {
    if (need.first > need.second) {
      return Status::IoError("the files need " + HumanBytes(need.first) + " but " + fs_dir[fsid] +
                             " has " + HumanBytes(need.second) + " free: " + std::strerror(ENOSPC));
    }
  }
  return Status::Ok();
}

// Sets the modification time of `path` (not following a final symbolic link) to `mtime_ms`.
Status SetMtime(const std::string& path, int64_t mtime_ms) {
  struct timespec times[2] = {};
  times[0].tv_nsec = UTIME_OMIT;
  times[1].tv_sec = static_cast<time_t>(mtime_ms / 1000);
  times[1].tv_nsec = static_cast<long>((mtime_ms % 1000) * 1'000'000);
  if (::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) {
    return Status::IoError("set the modification time of " + path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace

Status DownloadToFiles(RemoteConnection& conn, const std::string& bucket_id,
                       std::span<const DownloadJob> jobs, TransferStats* stats) {
  XET_ASSIGN_OR_RETURN(auto cas, conn.OpenCas(bucket_id, /*write=*/false));
  XET_RETURN_IF_ERROR(PrepareDestinations(jobs));
  if (stats) stats->files_total += jobs.size();
  DownloadOptions options;
  options.stats = stats;
  options.chunk_cache_dir = conn.ChunkCacheDir();
  Downloader downloader(cas->client(), options);
  for (const DownloadJob& job : jobs) {
    Status st = downloader.DownloadToFile(job.file.xet_hash, job.file.size, job.local_path);
    if (!st.ok()) return st.WithContext("download " + job.file.path);
    if (job.keep_mtime && job.file.mtime_ms > 0) {
      XET_RETURN_IF_ERROR(SetMtime(job.local_path, job.file.mtime_ms));
    }
  }
  return Status::Ok();
}

Status DownloadToStdout(RemoteConnection& conn, const std::string& bucket_id,
                        const RemoteEntry& file, TransferStats* stats) {
  XET_ASSIGN_OR_RETURN(auto cas, conn.OpenCas(bucket_id, /*write=*/false));
  if (stats) {  // DownloadRange counts bytes_done only
    stats->files_total += 1;
    stats->bytes_total += file.size;
  }
  if (file.size > 0) {
    DownloadOptions options;
    options.stats = stats;
    options.chunk_cache_dir = conn.ChunkCacheDir();
    Downloader downloader(cas->client(), options);
    Status write_error;
    // The streaming path checks no file hash of its own: hash what goes out, so that a
    // corrupted download at least fails the command.
    ChunkHashStream written;
    Status st =
        downloader.DownloadRange(file.xet_hash, 0, file.size - 1, [&](std::string_view bytes) {
          written.Consume({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
          while (!bytes.empty()) {
            const ssize_t n = ::write(STDOUT_FILENO, bytes.data(), bytes.size());
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
              write_error = Status::IoError(std::string("write to stdout: ") +
                                            std::strerror(n < 0 ? errno : EIO));
              return false;
            }
            bytes.remove_prefix(static_cast<size_t>(n));
          }
          return true;
        });
    if (!write_error.ok()) return write_error;
    XET_RETURN_IF_ERROR(st.WithContext("download " + file.path));
    if (const Hash got = FileHash(written.Finish()); got != file.xet_hash) {
      return Status::Corruption("download " + file.path + ": the bytes written to stdout hash to " +
                                got.ToHex() + ", expected " + file.xet_hash.ToHex() +
                                "; discard the output");
    }
  }
  if (stats) stats->files_done += 1;
  return Status::Ok();
}

Status DeleteLocalFiles(std::span<const std::string> paths) {
  for (const std::string& path : paths) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) continue;
      return Status::IoError("delete " + path + ": " + std::strerror(errno));
    }
    if (S_ISDIR(st.st_mode)) {
      return Status::InvalidArgument("delete " + path + ": is a directory, not a file");
    }
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return Status::IoError("delete " + path + ": " + std::strerror(errno));
    }
  }
  return Status::Ok();
}

}  // namespace xet::cli
