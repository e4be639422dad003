#include "client/bucket_transfer/bucket_download.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <system_error>

#include "client/download/downloader.h"
#include "common/human_bytes.h"
#include "common/unique_fd.h"

namespace xet {
namespace {

namespace fs = std::filesystem;

// The directory a destination file is created in.
fs::path ParentOf(const std::string& local_path) {
  fs::path parent = fs::path(local_path).parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

// Whether `path` (its final symbolic link followed) exists and is neither a regular file
// nor a directory: a character device such as /dev/null, a FIFO, a socket. `cp` writes
// such a destination in place, in order, like stdout (DownloadJob::write_into_special_file):
// renaming a finished .xetpart over it would replace the device itself (as root, /dev/null
// with a regular file).
bool IsSpecialFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

// Creates the destinations' directories and checks each file system has room for the bytes
// going to it (files already complete are counted too: their .xetpart is rewritten).
// Special files written in place (IsSpecialFile) take no room and are skipped.
Status PrepareDestinations(std::span<const DownloadJob> jobs) {
  std::map<fs::path, uint64_t> bytes_per_dir;
  for (const DownloadJob& job : jobs) {
    if (job.write_into_special_file && IsSpecialFile(job.local_path)) continue;
    bytes_per_dir[ParentOf(job.local_path)] += job.file.size;
  }
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

// Streams the bytes of `file` to `fd` (named `name` in errors) in order, checking the file
// hash at the end. Counts bytes_total, bytes_done and files_done into `stats`.
Status StreamFile(Downloader& downloader, const RemoteEntry& file, int fd, const std::string& name,
                  TransferStats* stats) {
  if (stats) stats->bytes_total += file.size;
  Status write_error;
  auto streamed = downloader.DownloadToSink(file.xet_hash, file.size, [&](std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::write(fd, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        write_error =
            Status::IoError("write to " + name + ": " + std::strerror(n < 0 ? errno : EIO));
        return false;
      }
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  });
  if (!write_error.ok()) return write_error;
  XET_RETURN_IF_ERROR(streamed.status().WithContext("download " + file.path));
  if (*streamed != file.xet_hash) {
    return Status::Corruption("download " + file.path + ": the bytes written to " + name +
                              " hash to " + streamed->ToHex() + ", expected " +
                              file.xet_hash.ToHex() + "; discard the output");
  }
  if (stats) stats->files_done += 1;
  return Status::Ok();
}

// Writes `file` into the special file `path` (IsSpecialFile) in place.
Status StreamToSpecialFile(Downloader& downloader, const RemoteEntry& file, const std::string& path,
                           TransferStats* stats) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid()) return Status::IoError("open " + path + ": " + std::strerror(errno));
  XET_RETURN_IF_ERROR(StreamFile(downloader, file, fd.get(), path, stats));
  if (fd.Reset() != 0) return Status::IoError("close " + path + ": " + std::strerror(errno));
  return Status::Ok();
}

// How often one job follows its path to a newer file before giving up.
constexpr int kMaxReplacedEntries = 3;

// The file `job_path` names in the bucket now. NotFound when it names none any more.
Result<RemoteEntry> CurrentEntry(HubClient& hub, const std::string& bucket_id,
                                 const std::string& job_path) {
  const std::string paths[] = {job_path};
  XET_ASSIGN_OR_RETURN(auto entries, hub.PathsInfo(bucket_id, paths));
  for (RemoteEntry& e : entries) {
    if (!e.is_directory && e.path == job_path) return std::move(e);
  }
  return Status::NotFound("it was removed from the bucket during the download");
}

// Downloads `job` into its local path. The listing the job came from may be stale: when
// the path was overwritten (or removed) since, the bucket no longer sees the file it named
// and its reconstruction is NotFound; then the path's current file is downloaded instead
// (up to kMaxReplacedEntries times), and a path that names nothing any more is NotFound.
Status DownloadJobToFile(RemoteConnection& conn, const std::string& bucket_id,
                         Downloader& downloader, const DownloadJob& job, TransferStats* stats) {
  RemoteEntry file = job.file;
  for (int replaced = 0;; ++replaced) {
    Status st = downloader.DownloadToFile(file.xet_hash, file.size, job.local_path);
    if (st.ok()) break;
    if (st.code() != Status::Code::kNotFound || replaced == kMaxReplacedEntries) {
      return st.WithContext("download " + file.path);
    }
    auto now = CurrentEntry(conn.hub(), bucket_id, file.path);
    if (!now.ok()) return now.status().WithContext("download " + file.path);
    if (now->xet_hash == file.xet_hash) return st.WithContext("download " + file.path);
    if (stats && stats->bytes_total >= file.size) stats->bytes_total -= file.size;  // recounted
    file = std::move(*now);
  }
  if (job.keep_mtime && file.mtime_ms > 0) {
    XET_RETURN_IF_ERROR(SetMtime(job.local_path, file.mtime_ms));
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
    if (job.write_into_special_file && IsSpecialFile(job.local_path)) {
      XET_RETURN_IF_ERROR(StreamToSpecialFile(downloader, job.file, job.local_path, stats));
      continue;
    }
    XET_RETURN_IF_ERROR(DownloadJobToFile(conn, bucket_id, downloader, job, stats));
  }
  return Status::Ok();
}

Status DownloadToStdout(RemoteConnection& conn, const std::string& bucket_id,
                        const RemoteEntry& file, TransferStats* stats) {
  XET_ASSIGN_OR_RETURN(auto cas, conn.OpenCas(bucket_id, /*write=*/false));
  if (stats) stats->files_total += 1;
  DownloadOptions options;
  options.stats = stats;
  options.chunk_cache_dir = conn.ChunkCacheDir();
  Downloader downloader(cas->client(), options);
  return StreamFile(downloader, file, STDOUT_FILENO, "stdout", stats);
}

}  // namespace xet
