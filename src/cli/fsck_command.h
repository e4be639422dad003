// `xetstore fsck`: index <-> object store consistency on the stores the backend flags name
// (store/ops/consistency_check.h).
#pragma once

#include <CLI/CLI.hpp>

namespace xet::cli {

void AddFsckCommand(CLI::App& app, int* exit_code);

}  // namespace xet::cli
