// `xetstore rm hf://buckets/NS/BUCKET/PATH...`: removes files (or, with --recursive,
// everything under a directory) from buckets, in one atomic batch per bucket.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>

#include "cli/remote_options.h"

namespace xet::cli {

void AddRmCommand(CLI::App& app, const std::shared_ptr<RemoteOptions>& remote, int* exit_code);

}  // namespace xet::cli
