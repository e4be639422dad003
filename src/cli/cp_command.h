// `xetstore cp SRC DST`: copies files between the local disk and buckets, and between
// buckets (server-side: no file data moves). '-' is standard input as SRC.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>

#include "cli/remote_options.h"

namespace xet::cli {

void AddCpCommand(CLI::App& app, const std::shared_ptr<RemoteOptions>& remote, int* exit_code);

}  // namespace xet::cli
