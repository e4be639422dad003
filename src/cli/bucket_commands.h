// `xetstore buckets create | list | info | delete | move`: bucket management over the
// server's Hub-compatible bucket API.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>

#include "cli/remote_options.h"

namespace xet::cli {

// Registers `buckets` and its subcommands on `app`; each subcommand takes the connection
// options into `remote` and stores its exit code in *exit_code when run.
void AddBucketCommands(CLI::App& app, const std::shared_ptr<RemoteOptions>& remote, int* exit_code);

}  // namespace xet::cli
