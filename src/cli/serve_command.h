// `xetstore serve`: runs a CAS server node on the embedded default (SQLite index + local
// object directory under --data-dir), and the `xetstore token` commands that manage the
// node's user tokens directly in its data directory.
#pragma once

#include <CLI/CLI.hpp>

namespace xet::cli {

void AddServeCommand(CLI::App& app, int* exit_code);
void AddTokenCommands(CLI::App& app, int* exit_code);

}  // namespace xet::cli
