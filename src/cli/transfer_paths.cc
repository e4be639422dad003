#include "cli/transfer_paths.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "client/sync/local_tree.h"
#include "common/ascii.h"
#include "protocol/bucket_path.h"

namespace xet::cli {
namespace {

namespace fs = std::filesystem;

}  // namespace

std::string JoinBucketPath(std::string_view dir, std::string_view name) {
  if (dir.empty()) return std::string(name);
  if (name.empty()) return std::string(dir);
  std::string out(dir);
  out += '/';
  out += name;
  return out;
}

std::string_view BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

Result<std::string> RemoteFileTarget(const RemotePath& dst, std::string_view source_name) {
  const bool into_directory = dst.path.empty() || dst.trailing_slash;
  if (!into_directory) return dst.path;
  if (source_name.empty()) {
    return Status::InvalidArgument(dst.ToString() +
                                   " names a directory: give the file's path in the bucket");
  }
  std::string target = JoinBucketPath(dst.path, source_name);
  if (Status st = ValidateBucketPath(target); !st.ok()) {
    return st.WithContext("destination " + dst.ToString());
  }
  return target;
}

Result<LocalFileInfo> StatLocalFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) return Status::NotFound(path + ": no such file");
    return Status::IoError(path + ": " + std::strerror(err));
  }
  if (S_ISDIR(st.st_mode)) return Status::InvalidArgument(path + " is a directory");
  if (!S_ISREG(st.st_mode)) return Status::InvalidArgument(path + " is not a regular file");
  return LocalFileInfo{static_cast<uint64_t>(st.st_size), UnixMillis(st.st_mtim)};
}

std::string LocalFileTarget(const std::string& dst, std::string_view source_name) {
  std::error_code ec;
  if (!dst.empty() && (dst.back() == '/' || fs::is_directory(dst, ec))) {
    return (fs::path(dst) / std::string(source_name)).string();
  }
  return dst;
}

Result<std::string> LocalPathBelow(const std::string& root, std::string_view rel) {
  if (Status st = ValidateBucketPath(rel); !st.ok()) {
    return Status::Corruption("refusing '" + WithoutControlChars(rel) + "' as a path below " +
                              root + ": " + st.message());
  }
  const fs::path base = root.empty() ? fs::path(".") : fs::path(root);
  fs::path dir = base;
  for (size_t start = 0, slash = rel.find('/'); slash != std::string_view::npos;
       start = slash + 1, slash = rel.find('/', start)) {
    dir /= std::string(rel.substr(start, slash - start));
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0) break;  // missing: created as a directory later
    if (S_ISLNK(st.st_mode)) {
      return Status::InvalidArgument(dir.string() +
                                     " is a symbolic link; refusing to write or delete through it");
    }
  }
  return (base / std::string(rel)).string();
}

}  // namespace xet::cli
