#include "cli/stats_command.h"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/node_config.h"
#include "cli/output.h"
#include "cli/remote_failure.h"
#include "common/human_bytes.h"
#include "store/ops/storage_stats.h"

namespace xet::cli {
namespace {

struct StatsArgs {
  std::string bucket;
  bool json = false;
};

nlohmann::json Figures(uint64_t files, uint64_t logical, uint64_t xorbs, uint64_t stored) {
  return {{"files", files},
          {"logical_bytes", logical},
          {"xorbs", xorbs},
          {"stored_bytes", stored},
          {"dedup_ratio", DedupRatio(logical, stored)}};
}

void PrintRow(const std::string& name, uint64_t files, uint64_t logical, uint64_t xorbs,
              uint64_t stored) {
  std::printf("%-40s %10llu %10s %8llu %10s %7.2fx\n", name.c_str(),
              static_cast<unsigned long long>(files), HumanBytes(logical).c_str(),
              static_cast<unsigned long long>(xorbs), HumanBytes(stored).c_str(),
              DedupRatio(logical, stored));
}

int RunStats(const NodeConfig& config, const StatsArgs& args) {
  auto index = OpenConfiguredIndex(config);
  if (!index.ok()) return ReportFailure(index.status());
  StatsOptions options;
  options.bucket = args.bucket;
  auto stats = ComputeStorageStats(**index, options);
  if (!stats.ok()) {
    if (stats.status().code() != Status::Code::kNotFound) return ReportFailure(stats.status());
    PrintError(stats.status().message(), "list the buckets with `xetstore buckets list`");
    return kExitNotFound;
  }
  if (args.json) {
    nlohmann::json buckets = nlohmann::json::array();
    for (const BucketStats& b : stats->buckets) {
      nlohmann::json j = Figures(b.files, b.logical_bytes, b.xorbs, b.stored_bytes);
      j["bucket"] = b.name;
      j["distinct_files"] = b.distinct_files;
      buckets.push_back(std::move(j));
    }
    nlohmann::json out = {
        {"buckets", std::move(buckets)},
        {"total", Figures(stats->files, stats->logical_bytes, stats->xorbs, stats->stored_bytes)}};
    std::printf("%s\n", out.dump().c_str());
    return kExitOk;
  }
  std::printf("%-40s %10s %10s %8s %10s %8s\n", "BUCKET", "FILES", "LOGICAL", "XORBS", "STORED",
              "DEDUP");
  for (const BucketStats& b : stats->buckets) {
    PrintRow(b.name, b.files, b.logical_bytes, b.xorbs, b.stored_bytes);
  }
  PrintRow("(total)", stats->files, stats->logical_bytes, stats->xorbs, stats->stored_bytes);
  return kExitOk;
}

}  // namespace

void AddStatsCommand(CLI::App& app, int* exit_code) {
  auto config = std::make_shared<NodeConfig>();
  auto args = std::make_shared<StatsArgs>();
  CLI::App* cmd = app.add_subcommand(
      "stats",
      "What the deployment stores and how well it deduplicates, per bucket and in total:\n"
      "files and logical bytes (the entries' sizes), xorbs and stored bytes (the compressed\n"
      "xorbs holding the data; a xorb shared by buckets counts in each bucket, once in the\n"
      "total, which also counts what gc has not freed yet) and the dedup ratio (logical /\n"
      "stored). Reads the index only; run it with the nodes' index options.");
  AddNodeOptions(cmd, config.get(), NodeOptions::kIndex);
  cmd->add_option("--bucket", args->bucket, "Only this bucket (NAMESPACE/BUCKET)");
  cmd->add_flag("--json", args->json, "One JSON object: {buckets: [...], total: {...}}");
  cmd->callback([config, args, exit_code] { *exit_code = RunStats(*config, *args); });
}

}  // namespace xet::cli
