// The directory one test process keeps its scratch files under:
// "<TMPDIR or /tmp>/<prefix><pid>". It is created when first asked for and removed, with
// everything in it, when the process that created it exits normally. A forked child that
// exits leaves it alone.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>

namespace xet::testing {

class ScratchRoot {
 public:
  explicit ScratchRoot(const std::string& prefix);
  ~ScratchRoot();
  ScratchRoot(const ScratchRoot&) = delete;
  ScratchRoot& operator=(const ScratchRoot&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  pid_t owner_;
};

}  // namespace xet::testing
