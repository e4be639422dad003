// `xetstore hash` and `xetstore chunks`: local Xet hashing of files, no server needed.
#pragma once

#include <CLI/CLI.hpp>

namespace xet::cli {

// Registers both subcommands on `app`. Each stores its exit code in *exit_code when run.
void AddHashCommands(CLI::App& app, int* exit_code);

}  // namespace xet::cli
