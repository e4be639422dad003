// The xetstore command line: builds the CLI11 command tree and runs one command.
#pragma once

namespace xet::cli {

// Parses argv, runs the chosen command and returns the process exit code
// (0 success, 1 runtime failure, 2 usage error). Never throws.
int RunApp(int argc, char** argv);

}  // namespace xet::cli
