// `xetstore gc`: frees the xorbs, shards and file records no bucket entry can reach, on the
// stores the backend flags name (store/ops/garbage_collector.h; docs/SERVER.md, "Garbage
// collection").
#pragma once

#include <CLI/CLI.hpp>

namespace xet::cli {

void AddGcCommand(CLI::App& app, int* exit_code);

}  // namespace xet::cli
