#include "cli/app.h"

#include <malloc.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "cli/bucket_commands.h"
#include "cli/cp_command.h"
#include "cli/fsck_command.h"
#include "cli/gc_command.h"
#include "cli/hash_commands.h"
#include "cli/ls_command.h"
#include "cli/migrate_command.h"
#include "cli/mount_command.h"
#include "cli/output.h"
#include "cli/remote_options.h"
#include "cli/rm_command.h"
#include "cli/serve_command.h"
#include "cli/stats_command.h"
#include "cli/sync_command.h"

namespace xet::cli {

namespace {

// The server builds and frees reconstruction answers of tens of MB per request; the client
// builds and frees a 64 MiB xorb buffer per xorb. By default glibc serves such blocks with
// fresh mmap()s, so each pays a page fault per 4 KiB (expensive in a virtualized guest);
// keeping them in the heap lets the next one reuse the pages.
void KeepLargeBlocksInHeap() {
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
}

}  // namespace

int RunApp(int argc, char** argv) {
  KeepLargeBlocksInHeap();  // before any thread starts
  CLI::App app{
      "xetstore: self-hosted, deduplicating storage for large, changing binary data.\n"
      "Speaks the Xet protocol: files are split into content-defined chunks, so a new\n"
      "version of a file only stores and transfers the chunks that changed.",
      "xetstore"};
  app.set_version_flag("--version", "xetstore 0.1.0");
  app.require_subcommand(1);
  app.footer(
      "Client commands (buckets, ls, cp, rm, sync) reach the server at --endpoint\n"
      "($XETSTORE_ENDPOINT, $HF_ENDPOINT, http://127.0.0.1:8080) with --token\n"
      "($XETSTORE_TOKEN, $HF_TOKEN); the options go before or after the command.\n"
      "Exit codes: 0 ok, 1 failure, 2 bad usage/name/path, 3 unknown bucket or path,\n"
      "4 no permission (401/403), 5 server unreachable, 6 disk full (local, or the\n"
      "server's: HTTP 507), 130 interrupted.");
  int exit_code = kExitOk;
  auto remote = std::make_shared<RemoteOptions>();
  AddRemoteOptions(&app, remote.get());
  AddServeCommand(app, &exit_code);
  AddTokenCommands(app, &exit_code);
  AddGcCommand(app, &exit_code);
  AddFsckCommand(app, &exit_code);
  AddStatsCommand(app, &exit_code);
  AddMigrateCommand(app, &exit_code);
  AddHashCommands(app, &exit_code);
  AddBucketCommands(app, remote, &exit_code);
  AddLsCommand(app, remote, &exit_code);
  AddCpCommand(app, remote, &exit_code);
  AddRmCommand(app, remote, &exit_code);
  AddSyncCommand(app, remote, &exit_code);
  AddMountCommands(app, remote, &exit_code);
  // mount(8) runs `xetstore SOURCE MOUNTPOINT -o OPTIONS` for fuse.xetstore fstab lines.
  std::vector<std::string> args = RewriteFstabArgs(std::vector<std::string>(argv, argv + argc));
  std::vector<char*> arg_ptrs;
  for (std::string& a : args) arg_ptrs.push_back(a.data());
  try {
    app.parse(static_cast<int>(arg_ptrs.size()), arg_ptrs.data());
  } catch (const CLI::ParseError& e) {
    // Prints help/version (exit 0) or the usage error (exit kExitUsage).
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  } catch (const std::exception& e) {
    PrintError(e.what());
    return kExitFailure;
  }
  return exit_code;
}

}  // namespace xet::cli
