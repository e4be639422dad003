// `xetstore sync SRC DST`: makes a bucket prefix match a local directory (upload) or a local
// directory match a bucket prefix (download), transferring only what differs by the rules of
// client/sync/sync_plan.h (size + mtime, or Xet hash with --checksum), optionally deleting what
// the source lacks (--delete), filtered by --include/--exclude (client/sync/path_filter.h).
// --dry-run prints the plan and changes nothing; --plan FILE writes it as JSON lines
// (client/sync/sync_plan_json.h) and changes nothing; --apply FILE carries out such a file's
// operations exactly, for the same SRC and DST. An upload registers its files and deletes in
// one bucket batch after all data landed (client/bucket_transfer/bucket_upload.h).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>

#include "cli/remote_options.h"

namespace xet::cli {

void AddSyncCommand(CLI::App& app, const std::shared_ptr<RemoteOptions>& remote, int* exit_code);

}  // namespace xet::cli
