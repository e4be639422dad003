#include "cli/fsck_command.h"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/node_config.h"
#include "cli/output.h"
#include "store/ops/consistency_check.h"

namespace xet::cli {
namespace {

struct FsckArgs {
  NodeConfig node;
  bool deep = false;
  bool repair = false;
  bool json = false;
};

void PrintReport(const FsckReport& r) {
  for (const FsckProblem& p : r.problems) {
    std::printf("%s %s: %s%s%s\n", p.kind.c_str(), p.key.c_str(), p.detail.c_str(),
                p.action.empty() ? "" : " -> ", p.action.c_str());
  }
  const size_t remaining = r.Remaining();
  std::printf(
      "fsck: checked %llu xorbs, %llu shards, %llu files, %llu objects: %zu problems (%zu "
      "repaired, %zu remain)\n",
      static_cast<unsigned long long>(r.xorbs_checked),
      static_cast<unsigned long long>(r.shards_checked),
      static_cast<unsigned long long>(r.files_checked),
      static_cast<unsigned long long>(r.objects_listed), r.problems.size(),
      r.problems.size() - remaining, remaining);
}

nlohmann::json ReportJson(const FsckReport& r) {
  nlohmann::json problems = nlohmann::json::array();
  for (const FsckProblem& p : r.problems) {
    problems.push_back({{"kind", p.kind},
                        {"key", p.key},
                        {"detail", p.detail},
                        {"repaired", p.repaired},
                        {"action", p.action}});
  }
  return {{"checked",
           {{"xorbs", r.xorbs_checked},
            {"shards", r.shards_checked},
            {"files", r.files_checked},
            {"objects", r.objects_listed}}},
          {"pending_deletions", r.pending_deletions},
          {"problems", problems},
          {"remaining", r.Remaining()}};
}

int RunFsck(const FsckArgs& args) {
  auto index = OpenConfiguredIndex(args.node);
  if (!index.ok()) return ReportFailure(index.status());
  auto objects = OpenConfiguredObjects(args.node);
  if (!objects.ok()) return ReportFailure(objects.status());
  ConsistencyCheck check(**index, **objects, FsckOptions{args.deep, args.repair});
  auto report = check.Run();
  if (!report.ok()) return ReportFailure(report.status());
  if (args.json) {
    std::printf("%s\n", ReportJson(*report).dump().c_str());
  } else {
    PrintReport(*report);
  }
  return report->Remaining() == 0 ? kExitOk : kExitFailure;
}

}  // namespace

void AddFsckCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<FsckArgs>();
  CLI::App* fsck = app.add_subcommand(
      "fsck",
      "Check the index against the object store: rows without objects, objects without "
      "rows, files naming missing xorbs; exit 1 while problems remain");
  AddNodeOptions(fsck, &args->node, NodeOptions::kStorage);
  fsck->add_flag("--deep", args->deep,
                 "Also read every xorb and shard and verify its hash (reads the whole store)");
  fsck->add_flag("--repair", args->repair,
                 "Register unindexed xorbs again, quarantine corrupt objects under "
                 "quarantine/, drop rows whose object is gone and that nothing needs");
  fsck->add_flag("--json", args->json, "Print the report as one JSON object");
  fsck->callback([args, exit_code] { *exit_code = RunFsck(*args); });
}

}  // namespace xet::cli
