#include "support/scratch_root.h"

#include <unistd.h>

#include <cstdlib>
#include <system_error>

namespace xet::testing {

ScratchRoot::ScratchRoot(const std::string& prefix) : owner_(::getpid()) {
  const char* base = std::getenv("TMPDIR");
  path_ = std::filesystem::path(base ? base : "/tmp") / (prefix + std::to_string(owner_));
  std::filesystem::create_directories(path_);
}

ScratchRoot::~ScratchRoot() {
  if (::getpid() != owner_) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace xet::testing
