#include "client/bucket_transfer/local_delete.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace xet {

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

}  // namespace xet
