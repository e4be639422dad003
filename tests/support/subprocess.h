// Runs the real xetstore binary in tests and captures its output.
#pragma once

#include <string>

namespace xet::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `/bin/sh -c "<xetstore binary> <args>"` (args are shell syntax, so tests may use
// redirections) and waits for it.
CommandResult RunXetstore(const std::string& args);

// Writes bytes to a fresh file under the test temp dir and returns its path.
std::string WriteTempFile(const std::string& name, const void* data, size_t size);

}  // namespace xet::testing
