#include "cli/gc_command.h"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/duration_flag.h"
#include "cli/node_config.h"
#include "cli/output.h"
#include "common/human_bytes.h"
#include "store/ops/garbage_collector.h"

namespace xet::cli {
namespace {

struct GcArgs {
  NodeConfig node;
  std::string grace = "24h";
  bool dry_run = false;
  bool json = false;
};

void PrintReport(const GcReport& r, const std::string& grace) {
  const char* verb = r.dry_run ? "would free" : "freed";
  std::printf("%sgrace %s: what was last seen before %s UTC is old enough\n",
              r.dry_run ? "dry run (nothing deleted); " : "", grace.c_str(),
              FormatUtcTime(r.cutoff_ms).c_str());
  std::printf("files:  %s %llu of %llu records\n", verb,
              static_cast<unsigned long long>(r.files_freed),
              static_cast<unsigned long long>(r.files_scanned));
  std::printf("xorbs:  %s %llu of %llu (%s); %llu reachable\n", verb,
              static_cast<unsigned long long>(r.xorbs_freed),
              static_cast<unsigned long long>(r.xorbs_scanned),
              HumanBytes(r.xorb_bytes_freed).c_str(),
              static_cast<unsigned long long>(r.xorbs_reachable));
  std::printf(
      "shards: %s %llu of %llu (%s)\n", verb, static_cast<unsigned long long>(r.shards_freed),
      static_cast<unsigned long long>(r.shards_scanned), HumanBytes(r.shard_bytes_freed).c_str());
  if (r.pending_finished > 0) {
    std::printf("objects left by an interrupted run: %s %llu\n",
                r.dry_run ? "would delete" : "deleted",
                static_cast<unsigned long long>(r.pending_finished));
  }
  if (r.shards_unreadable > 0) {
    std::printf("kept %llu shards whose objects are missing or do not parse (see xetstore fsck)\n",
                static_cast<unsigned long long>(r.shards_unreadable));
  }
}

nlohmann::json ReportJson(const GcReport& r, int64_t grace_ms) {
  return {{"dry_run", r.dry_run},
          {"grace_ms", grace_ms},
          {"cutoff_ms", r.cutoff_ms},
          {"files", {{"scanned", r.files_scanned}, {"freed", r.files_freed}}},
          {"xorbs",
           {{"scanned", r.xorbs_scanned},
            {"reachable", r.xorbs_reachable},
            {"freed", r.xorbs_freed},
            {"bytes_freed", r.xorb_bytes_freed}}},
          {"shards",
           {{"scanned", r.shards_scanned},
            {"freed", r.shards_freed},
            {"bytes_freed", r.shard_bytes_freed},
            {"unreadable", r.shards_unreadable}}},
          {"pending_finished", r.pending_finished}};
}

int RunGc(const GcArgs& args) {
  auto grace = ParseDurationMs(args.grace);
  if (!grace.ok()) {
    PrintError("--grace: " + grace.status().message());
    return kExitUsage;
  }
  auto index = OpenConfiguredIndex(args.node);
  if (!index.ok()) return ReportFailure(index.status());
  auto objects = OpenConfiguredObjects(args.node);
  if (!objects.ok()) return ReportFailure(objects.status());
  GcOptions options;
  options.grace_ms = *grace;
  options.dry_run = args.dry_run;
  GarbageCollector gc(**index, **objects, std::move(options));
  auto report = gc.Run();
  if (!report.ok()) return ReportFailure(report.status(), "gc can be run again: it resumes");
  if (args.json) {
    std::printf("%s\n", ReportJson(*report, *grace).dump().c_str());
  } else {
    PrintReport(*report, args.grace);
  }
  return kExitOk;
}

}  // namespace

void AddGcCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<GcArgs>();
  CLI::App* gc = app.add_subcommand(
      "gc",
      "Free the xorbs, shards and file records no bucket entry reaches and nothing has used "
      "within the grace period; safe while nodes serve uploads");
  AddNodeOptions(gc, &args->node, NodeOptions::kStorage);
  gc->add_option("--grace", args->grace,
                 "Keep whatever was uploaded, registered or handed out for deduplication "
                 "within this long (e.g. 30m, 24h, 7d); it must exceed your longest upload")
      ->capture_default_str();
  gc->add_flag("--dry-run", args->dry_run, "Report what would be freed; delete nothing");
  gc->add_flag("--json", args->json, "Print the report as one JSON object");
  gc->callback([args, exit_code] { *exit_code = RunGc(*args); });
}

}  // namespace xet::cli
