#include "cli/process_resources.h"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <string>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace xet::cli {

Result<uint64_t> RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return Status::IoError(std::string("getrlimit(RLIMIT_NOFILE): ") + std::strerror(errno));
  }
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) {
      return Status::IoError(std::string("setrlimit(RLIMIT_NOFILE): ") + std::strerror(errno));
    }
  }
  return static_cast<uint64_t>(limit.rlim_cur);
}

void FixMmapThreshold(size_t bytes) {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(bytes));
#else
  (void)bytes;
#endif
}

}  // namespace xet::cli
