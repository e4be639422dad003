#include "cli/migrate_command.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/node_config.h"
#include "cli/output.h"
#include "common/atomic_file.h"
#include "common/human_bytes.h"
#include "store/ops/deployment_migrator.h"
#include "store/ops/migrate_state.h"

namespace xet::cli {
namespace {

struct MigrateArgs {
  NodeConfig from;
  NodeConfig to;
  std::string state_file;  // default: <to data dir>/migrate.state
  size_t copy_threads = 4;
  bool delete_extra = false;
  bool json = false;
};

// A libpq URI with its password (if any) left out: "postgres://user:secret@host/db" ->
// "postgres://user@host/db". Key=value strings and URIs without one are unchanged.
std::string WithoutPassword(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  const size_t at = url.find('@', scheme + 3);
  const size_t colon = url.find(':', scheme + 3);
  if (at == std::string::npos || colon == std::string::npos || colon > at) return url;
  return url.substr(0, colon) + url.substr(at);
}

// What a deployment's stores are, as the output and the state file show them (no password).
std::string Describe(const NodeConfig& c) {
  return (c.IndexIsPostgres() ? WithoutPassword(c.index_url)
                              : std::filesystem::absolute(c.IndexPath()).string()) +
         " + " +
         (c.objects_url.starts_with("s3://") ? c.objects_url
                                             : std::filesystem::absolute(c.ObjectsPath()).string());
}

// The checkpoint of an earlier run of this migration, if `path` holds one. A state file of
// another migration (other stores) is an error: its row ids mean nothing here.
Result<MigrateCheckpoint> LoadState(const std::string& path, const std::string& from,
                                    const std::string& to) {
  std::ifstream in(path);
  if (!in) return MigrateCheckpoint{};
  std::stringstream text;
  text << in.rdbuf();
  auto state = ParseMigrateState(text.str());
  if (!state.ok()) {
    return Status::InvalidArgument("state file " + path + ": " + state.status().message() +
                                   "; remove it or pass --state");
  }
  if (state->from != from || state->to != to) {
    return Status::InvalidArgument("state file " + path + " is for another migration (" +
                                   state->from + " -> " + state->to +
                                   "); remove it or pass --state");
  }
  return state->checkpoint;
}

Status SaveState(const std::string& path, const std::string& from, const std::string& to,
                 const MigrateCheckpoint& c) {
  return WriteFileAtomically(path, FormatMigrateState({from, to, c}), 0600);
}

std::string ProgressLine(const char* step, const MigrateReport& r) {
  char line[256];
  std::snprintf(line, sizeof line,
                "%-7s xorbs %llu  files %llu  shards %llu  copied %llu objects (%s)  buckets %llu",
                step, static_cast<unsigned long long>(r.xorbs),
                static_cast<unsigned long long>(r.files), static_cast<unsigned long long>(r.shards),
                static_cast<unsigned long long>(r.objects_copied),
                HumanBytes(r.bytes_copied).c_str(), static_cast<unsigned long long>(r.buckets));
  return line;
}

nlohmann::json ReportJson(const MigrateReport& r, const std::string& from, const std::string& to) {
  return {{"from", from},
          {"to", to},
          {"xorbs", r.xorbs},
          {"files", r.files},
          {"shards", r.shards},
          {"shards_without_object", r.shards_without_object},
          {"objects_copied", r.objects_copied},
          {"bytes_copied", r.bytes_copied},
          {"objects_present", r.objects_present},
          {"buckets", r.buckets},
          {"entries_written", r.entries_written},
          {"entries_removed", r.entries_removed},
          {"extra_buckets", r.extra_buckets},
          {"tokens", r.tokens}};
}

void PrintReport(const MigrateReport& r, bool deleted_extra) {
  std::printf("rows:    %llu xorbs, %llu files, %llu shards, %llu tokens\n",
              static_cast<unsigned long long>(r.xorbs), static_cast<unsigned long long>(r.files),
              static_cast<unsigned long long>(r.shards), static_cast<unsigned long long>(r.tokens));
  std::printf("objects: copied %llu (%s); %llu were already there\n",
              static_cast<unsigned long long>(r.objects_copied), HumanBytes(r.bytes_copied).c_str(),
              static_cast<unsigned long long>(r.objects_present));
  std::printf("buckets: %llu; %llu entries written, %llu removed\n",
              static_cast<unsigned long long>(r.buckets),
              static_cast<unsigned long long>(r.entries_written),
              static_cast<unsigned long long>(r.entries_removed));
  if (r.extra_buckets > 0) {
    std::printf(deleted_extra
                    ? "deleted %llu buckets the source does not have\n"
                    : "%llu buckets are in the destination only (--delete removes them)\n",
                static_cast<unsigned long long>(r.extra_buckets));
  }
  if (r.shards_without_object > 0) {
    std::printf("skipped %llu shard rows whose objects the source lacks (see xetstore fsck)\n",
                static_cast<unsigned long long>(r.shards_without_object));
  }
}

int RunMigrate(MigrateArgs& args) {
  const std::string from = Describe(args.from);
  const std::string to = Describe(args.to);
  if (args.from.IndexIsPostgres() == args.to.IndexIsPostgres() &&
      (args.from.IndexIsPostgres() ? args.from.index_url == args.to.index_url
                                   : std::filesystem::absolute(args.from.IndexPath()) ==
                                         std::filesystem::absolute(args.to.IndexPath()))) {
    PrintError("the destination index is the source's (" + from + ")",
               "name the destination with --to-data-dir, --to-index and --to-objects");
    return kExitUsage;
  }
  if (args.state_file.empty()) args.state_file = args.to.data_dir + "/migrate.state";
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::absolute(args.state_file).parent_path(), ec);
  auto checkpoint = LoadState(args.state_file, from, to);
  if (!checkpoint.ok()) return ReportFailure(checkpoint.status());

  auto from_index = OpenConfiguredIndex(args.from);
  if (!from_index.ok()) return ReportFailure(from_index.status().WithContext("source"));
  auto from_objects = OpenConfiguredObjects(args.from);
  if (!from_objects.ok()) return ReportFailure(from_objects.status().WithContext("source"));
  auto to_index = OpenConfiguredIndex(args.to);
  if (!to_index.ok()) return ReportFailure(to_index.status().WithContext("destination"));
  auto to_objects = OpenConfiguredObjects(args.to);
  if (!to_objects.ok()) return ReportFailure(to_objects.status().WithContext("destination"));

  const bool show_progress = !args.json && isatty(STDERR_FILENO) == 1;
  MigrateOptions options;
  options.copy_threads = args.copy_threads;
  options.delete_extra_buckets = args.delete_extra;
  options.save_checkpoint = [&](const MigrateCheckpoint& c) {
    return SaveState(args.state_file, from, to, c);
  };
  if (show_progress) {
    options.progress = [](const char* step, const MigrateReport& r) {
      std::fprintf(stderr, "\r%s\033[K", ProgressLine(step, r).c_str());
    };
  }
  if (!args.json) std::printf("migrating %s -> %s\n", from.c_str(), to.c_str());
  DeploymentMigrator migrator(**from_index, **from_objects, **to_index, **to_objects,
                              std::move(options));
  auto report = migrator.Run(*checkpoint);
  if (show_progress) std::fprintf(stderr, "\n");
  if (!report.ok()) {
    return ReportFailure(report.status(),
                         "run the same command again: it resumes where it stopped");
  }
  if (args.json) {
    std::printf("%s\n", ReportJson(*report, from, to).dump().c_str());
  } else {
    PrintReport(*report, args.delete_extra);
    std::printf("done; run it again after writes stop to copy what changed meanwhile\n");
  }
  return kExitOk;
}

}  // namespace

void AddMigrateCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<MigrateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "migrate",
      "Copy a deployment's index and objects to other backends (SQLite + directory to "
      "PostgreSQL + S3, or back): the source is only read and keeps serving; resumable; run "
      "it again after writes stop to copy what changed meanwhile");
  cmd->footer(
      "The source is named by --data-dir/--index/--objects/--s3-* (as for serve), the "
      "destination by the same options prefixed with --to-. Copies objects first, then their "
      "index rows, then bucket entries (made equal to the source's), then tokens. The signing "
      "secret is not copied: give the new nodes the old secret file to keep signed URLs valid.");
  AddNodeOptions(cmd, &args->from, NodeOptions::kStorage);
  AddNodeOptions(cmd, &args->to, NodeOptions::kStorage, "to-");
  cmd->add_option("--state", args->state_file,
                  "Where the run records how far it got, to resume (default "
                  "<to-data-dir>/migrate.state)");
  cmd->add_option("--copy-threads", args->copy_threads, "Objects copied at once")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_flag("--delete", args->delete_extra,
                "Delete destination buckets the source does not have");
  cmd->add_flag("--json", args->json, "Print the report as one JSON object");
  cmd->callback([args, exit_code] { *exit_code = RunMigrate(*args); });
}

}  // namespace xet::cli
