#include "support/subprocess.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "support/file_contents.h"
#include "support/sanitizer_report.h"
#include "support/scratch_root.h"

namespace xet::testing {
namespace {

const std::filesystem::path& TempDir() {
  static const ScratchRoot root("xetstore-test-");
  return root.path();
}

}  // namespace

CommandResult RunXetstore(const std::string& args) {
  static int counter = 0;
  const auto out_path = TempDir() / ("out." + std::to_string(++counter));
  const auto err_path = TempDir() / ("err." + std::to_string(counter));
  const std::string cmd = std::string(XETSTORE_BINARY) + " " + args + " >" + out_path.string() +
                          " 2>" + err_path.string();
  const int status = std::system(cmd.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadWholeFile(out_path);
  r.err = ReadWholeFile(err_path);
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  ExpectNoSanitizerReport(r.err, "xetstore " + args);
  return r;
}

std::string WriteTempFile(const std::string& name, const void* data, size_t size) {
  const auto path = TempDir() / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path.string();
}

}  // namespace xet::testing
