#include "client/sync/local_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

#include "client/upload/file_hasher.h"
#include "common/unique_fd.h"
#include "protocol/bucket_path.h"

namespace xet {
namespace {

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};
using DirHandle = std::unique_ptr<DIR, DirCloser>;

Status ErrnoStatus(const std::string& what, int err) {
  return Status::IoError(what + ": " + std::strerror(err));
}

// Opens directory `rel` ("" = the root) under `root_fd` for reading.
Result<DirHandle> OpenDir(int root_fd, const std::string& root, const std::string& rel) {
  const int fd = ::openat(root_fd, rel.empty() ? "." : rel.c_str(),
                          O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(root + "/" + rel, errno);
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    const int err = errno;
    ::close(fd);
    return ErrnoStatus(root + "/" + rel, err);
  }
  return DirHandle(d);
}

}  // namespace

int64_t UnixMillis(const struct timespec& t) {
  if (t.tv_sec < 0) return 0;
  return static_cast<int64_t>(t.tv_sec) * 1000 + t.tv_nsec / 1'000'000;
}

Result<LocalTree> ListLocalTree(const std::string& root) {
  struct stat st {};
  if (::stat(root.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT) return Status::NotFound(root + ": no such directory");
    return ErrnoStatus(root, err);
  }
  if (!S_ISDIR(st.st_mode)) return Status::InvalidArgument(root + ": not a directory");
  const UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (root_fd.get() < 0) return ErrnoStatus(root, errno);

  LocalTree tree;
  std::vector<std::string> pending = {""};  // directories still to read, relative
  while (!pending.empty()) {
    const std::string dir = std::move(pending.back());
    pending.pop_back();
    XET_ASSIGN_OR_RETURN(DirHandle d, OpenDir(root_fd.get(), root, dir));
    const int dfd = ::dirfd(d.get());
    while (true) {
      errno = 0;
      const dirent* ent = ::readdir(d.get());
      if (ent == nullptr) {
        if (errno != 0) return ErrnoStatus(root + "/" + dir, errno);
        break;
      }
      const std::string_view name = ent->d_name;
      if (name == "." || name == "..") continue;
      std::string rel = dir.empty() ? std::string(name) : dir + "/" + std::string(name);

      if (ent->d_type == DT_DIR) {
        pending.push_back(std::move(rel));
        continue;
      }
      if (::fstatat(dfd, ent->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) continue;  // removed while listing
        return ErrnoStatus(root + "/" + rel, errno);
      }
      if (S_ISDIR(st.st_mode)) {  // file systems without d_type
        pending.push_back(std::move(rel));
        continue;
      }
      if (S_ISLNK(st.st_mode)) {
        if (::fstatat(dfd, ent->d_name, &st, 0) != 0) {
          tree.skipped.push_back(rel + ": dangling symbolic link");
          continue;
        }
        if (S_ISDIR(st.st_mode)) {
          tree.skipped.push_back(rel + ": symbolic link to a directory (not followed)");
          continue;
        }
      }
      if (!S_ISREG(st.st_mode)) {
        tree.skipped.push_back(rel + ": not a regular file");
        continue;
      }
      if (Status valid = ValidateBucketPath(rel); !valid.ok()) {
        tree.skipped.push_back(rel + ": " + valid.message());
        continue;
      }
      tree.files.push_back({std::move(rel), static_cast<uint64_t>(st.st_size),
                            UnixMillis(st.st_mtim), std::nullopt});
    }
  }
  return tree;
}

SyncHasher MakeLocalHasher(std::string root) {
  return [root = std::move(root)](const SyncFile& file) -> Result<Hash> {
    XET_ASSIGN_OR_RETURN(auto source, OpenFileSource(root + "/" + file.path));
    XET_ASSIGN_OR_RETURN(const FileDigest digest,
                         DigestSource(*source, {.compute_sha256 = false, .on_chunk = {}}));
    return digest.file_hash;
  };
}

}  // namespace xet
