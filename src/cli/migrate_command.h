// `xetstore migrate`: copies a deployment's index and objects to another backend pair
// (SQLite + a directory to PostgreSQL + S3, and back), resumable, while the source keeps
// serving (store/ops/deployment_migrator.h; docs/DEPLOY.md, "Migrating").
#pragma once

#include <CLI/CLI.hpp>

namespace xet::cli {

void AddMigrateCommand(CLI::App& app, int* exit_code);

}  // namespace xet::cli
