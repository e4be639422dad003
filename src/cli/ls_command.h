// `xetstore ls hf://buckets/NS/BUCKET[/PREFIX]`: the files and directories in a bucket.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>

#include "cli/remote_options.h"

namespace xet::cli {

void AddLsCommand(CLI::App& app, const std::shared_ptr<RemoteOptions>& remote, int* exit_code);

}  // namespace xet::cli
