// `xetstore stats [--bucket NS/BUCKET] [--json]`: logical bytes, stored bytes, the dedup
// ratio, files and xorbs, per bucket and in total, read from a node's index
// (store/ops/storage_stats.h). Takes the index options of serve.
#pragma once

#include <CLI/CLI.hpp>

namespace xet::cli {

void AddStatsCommand(CLI::App& app, int* exit_code);

}  // namespace xet::cli
