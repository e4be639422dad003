#include "support/file_contents.h"

#include <fstream>
#include <sstream>

namespace xet::testing {

std::string ReadWholeFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream out;
  out << in.rdbuf();
  return std::move(out).str();
}

}  // namespace xet::testing
