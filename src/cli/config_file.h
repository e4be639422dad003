// The --config option of the commands that run on a node's backends (serve): a TOML/INI
// file of `key = value` lines, one per long option ("listen", "data-dir" or "data_dir"),
// that supplies what neither the command line nor the option's XETSTORE_* variable gave.
//
// (CLI11's own set_config reads a file only for the top-level app, never for a
// subcommand's options, hence this.)
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "common/status.h"

namespace xet::cli {

// Adds `--config FILE` to `cmd`, bound to `path`.
void AddConfigFileOption(CLI::App* cmd, std::string* path);

// Requires: `cmd` has been parsed (its options hold the command line's and the
// environment's values). Reads the file at `path` and gives each option it names that is
// still unset (no flag, no environment variable) the file's value, checked by the option's
// own validators. A flag thus beats the environment, which beats the file, which beats the
// default. Returns InvalidArgument naming the file and the key for an unreadable file, a
// [section], a key that is no option of `cmd` (or is --config itself), or a value the
// option refuses; options of earlier lines may then hold the file's values, so the caller
// must not run the command.
Status ApplyConfigFile(CLI::App* cmd, const std::string& path);

}  // namespace xet::cli
