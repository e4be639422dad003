#include "cli/sync_command.h"

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli/interrupt.h"
#include "cli/output.h"
#include "cli/progress.h"
#include "cli/remote_failure.h"
#include "cli/sha256_flag.h"
#include "cli/transfer_paths.h"
#include "client/bucket_transfer/bucket_download.h"
#include "client/bucket_transfer/bucket_upload.h"
#include "client/bucket_transfer/local_delete.h"
#include "client/bucket_transfer/remote_connection.h"
#include "client/bucket_transfer/remote_lookup.h"
#include "client/download/part_file.h"
#include "client/hub/remote_path.h"
#include "client/sync/local_tree.h"
#include "client/sync/path_filter.h"
#include "client/sync/remote_tree.h"
#include "client/sync/sync_plan.h"
#include "client/sync/sync_plan_json.h"
#include "common/ascii.h"
#include "common/atomic_file.h"
#include "common/human_bytes.h"
#include "protocol/bucket_path.h"

namespace xet::cli {
namespace {

// Largest plan file --apply reads (about 4 million operations).
constexpr size_t kMaxPlanFileBytes = 1ull << 30;

struct SyncArgs {
  std::string src;
  std::string dst;
  bool delete_extraneous = false;
  bool dry_run = false;
  bool checksum = false;
  bool sha256 = false;
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  std::string plan_file;
  std::string apply_file;
  OutputFlags output;
};

// The two ends of a sync, resolved from SRC and DST.
struct SyncEnds {
  SyncDirection direction = SyncDirection::kUpload;
  std::string local;  // the local directory as given
  RemotePath remote;
  // Canonical names, recorded in plan files: the local directory as an absolute, normal path;
  // the remote as hf://buckets/NS/BUCKET[/PATH] without a trailing '/'.
  std::string source;
  std::string destination;
};

std::string CanonicalLocal(const std::string& dir) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(dir, ec);
  if (ec) p = dir;
  std::string s = p.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

Result<SyncEnds> ResolveEnds(const SyncArgs& args) {
  const bool src_remote = IsRemotePath(args.src);
  const bool dst_remote = IsRemotePath(args.dst);
  if (src_remote && dst_remote) {
    return Status::InvalidArgument(
        "sync between two buckets is not supported: copy on the server with xetstore cp -r " +
        args.src + " " + args.dst);
  }
  if (!src_remote && !dst_remote) {
    return Status::InvalidArgument(
        "neither side is hf://buckets/NAMESPACE/BUCKET[/PATH]: sync copies between a local "
        "directory and a bucket (use rsync or cp -r for two local directories)");
  }
  SyncEnds ends;
  ends.direction = src_remote ? SyncDirection::kDownload : SyncDirection::kUpload;
  ends.local = src_remote ? args.dst : args.src;
  XET_ASSIGN_OR_RETURN(ends.remote, ParseRemotePath(src_remote ? args.src : args.dst));
  RemotePath canonical = ends.remote;
  canonical.trailing_slash = false;
  const std::string local = CanonicalLocal(ends.local);
  ends.source = src_remote ? canonical.ToString() : local;
  ends.destination = src_remote ? local : canonical.ToString();
  return ends;
}

// The --include/--exclude rules in command-line order (a later rule wins).
Result<PathFilter> FilterFromCommandLine(const CLI::App& cmd, const SyncArgs& args) {
  const CLI::Option* include = cmd.get_option("--include");
  const CLI::Option* exclude = cmd.get_option("--exclude");
  PathFilter filter;
  size_t next_include = 0;
  size_t next_exclude = 0;
  for (const CLI::Option* opt : cmd.parse_order()) {
    if (opt == include && next_include < args.include.size()) {
      XET_RETURN_IF_ERROR(filter.Add(FilterAction::kInclude, args.include[next_include++]));
    } else if (opt == exclude && next_exclude < args.exclude.size()) {
      XET_RETURN_IF_ERROR(filter.Add(FilterAction::kExclude, args.exclude[next_exclude++]));
    }
  }
  return filter;
}

std::string RemoteName(const SyncEnds& ends, const std::string& rel) {
  RemotePath p = ends.remote;
  p.path = JoinBucketPath(p.path, rel);
  p.trailing_slash = false;
  return p.ToString();
}

std::string LocalName(const SyncEnds& ends, const std::string& rel) {
  return ends.local + (ends.local.ends_with('/') ? "" : "/") + rel;
}

// The files of the local directory (a missing download destination is empty). Entries
// ListLocalTree skips, and files an upload cannot name under the remote prefix (too long),
// are reported on stderr (not with -q) and left out.
Result<std::vector<SyncFile>> ListLocalSide(const SyncEnds& ends, bool quiet) {
  auto tree = ListLocalTree(ends.local);
  if (!tree.ok()) {
    if (ends.direction == SyncDirection::kDownload &&
        tree.status().code() == Status::Code::kNotFound) {
      return std::vector<SyncFile>{};
    }
    return tree.status();
  }
  std::vector<std::string> skipped = std::move(tree->skipped);
  std::vector<SyncFile> files;
  files.reserve(tree->files.size());
  for (SyncFile& f : tree->files) {
    // A download's own partial files are neither compared nor deleted.
    if (ends.direction == SyncDirection::kDownload && PartFile::IsPartOrSidecarPath(f.path)) {
      continue;
    }
    if (ends.direction == SyncDirection::kUpload && !ends.remote.path.empty()) {
      if (Status st = ValidateBucketPath(JoinBucketPath(ends.remote.path, f.path)); !st.ok()) {
        skipped.push_back(f.path + ": in the bucket, " + st.message());
        continue;
      }
    }
    files.push_back(std::move(f));
  }
  if (!quiet) {
    for (const std::string& why : skipped) {
      std::fprintf(stderr, "xetstore: warning: skipped %s\n",
                   WithoutControlChars(LocalName(ends, why)).c_str());
    }
  }
  return files;
}

// Lists both ends and plans.
Result<SyncPlan> MakePlan(HubClient& hub, const SyncEnds& ends, const SyncArgs& args,
                          PathFilter filter, SyncPlanCounts* counts) {
  XET_ASSIGN_OR_RETURN(std::vector<SyncFile> local, ListLocalSide(ends, args.output.quiet));
  XET_ASSIGN_OR_RETURN(std::vector<SyncFile> remote,
                       ListRemoteTree(hub, ends.remote.BucketId(), ends.remote.path));
  // A mistyped source would otherwise look like an empty directory, and --delete would empty
  // the local side. (A bucket's root is a directory even when empty.)
  if (ends.direction == SyncDirection::kDownload && remote.empty() && !ends.remote.path.empty()) {
    return NoSuchRemotePath(ends.remote);
  }

  SyncOptions options;
  options.direction = ends.direction;
  options.delete_extraneous = args.delete_extraneous;
  options.checksum = args.checksum;
  options.filter = std::move(filter);
  const bool up = ends.direction == SyncDirection::kUpload;
  XET_ASSIGN_OR_RETURN(SyncPlan plan, PlanSync(up ? std::move(local) : std::move(remote),
                                               up ? std::move(remote) : std::move(local), options,
                                               MakeLocalHasher(ends.local), counts));
  plan.source = ends.source;
  plan.destination = ends.destination;
  return plan;
}

Result<SyncPlan> ReadPlanFile(const std::string& file, const SyncEnds& ends) {
  XET_ASSIGN_OR_RETURN(const std::string text, ReadSmallFile(file, kMaxPlanFileBytes));
  auto plan = SyncPlanFromJsonLines(text);
  if (!plan.ok()) return plan.status().WithContext(file);
  if (plan->direction != ends.direction || plan->source != ends.source ||
      plan->destination != ends.destination) {
    return Status::InvalidArgument(file + " is a plan for " + WithoutControlChars(plan->source) +
                                   " -> " + WithoutControlChars(plan->destination) + ", not for " +
                                   WithoutControlChars(ends.source) + " -> " +
                                   WithoutControlChars(ends.destination));
  }
  return plan;
}

struct PlanTotals {
  uint64_t transfers = 0;
  uint64_t transfer_bytes = 0;
  uint64_t deletes = 0;
};

PlanTotals Totals(const SyncPlan& plan) {
  PlanTotals t;
  for (const SyncOp& op : plan.ops) {
    if (op.kind == SyncOpKind::kDelete) {
      ++t.deletes;
    } else {
      ++t.transfers;
      t.transfer_bytes += op.size;
    }
  }
  return t;
}

// One line per operation, as `aws s3 sync` prints them ("(dryrun) " first for --dry-run).
void PrintOps(const SyncPlan& plan, const SyncEnds& ends, bool dry_run) {
  const char* prefix = dry_run ? "(dry run) " : "";
  for (const SyncOp& op : plan.ops) {
    std::string line;
    switch (op.kind) {
      case SyncOpKind::kUpload:
        line = "upload: " + LocalName(ends, op.path) + " -> " + RemoteName(ends, op.path);
        break;
      case SyncOpKind::kDownload:
        line = "download: " + RemoteName(ends, op.path) + " -> " + LocalName(ends, op.path);
        break;
      case SyncOpKind::kDelete:
        line = "delete: " + (ends.direction == SyncDirection::kUpload ? RemoteName(ends, op.path)
                                                                      : LocalName(ends, op.path));
        break;
    }
    std::printf("%s%s (%s)\n", prefix, WithoutControlChars(line).c_str(),
                std::string(SyncReasonName(op.reason)).c_str());
  }
  std::fflush(stdout);
}

// The plan's totals, and what planning left alone (`counts`; null for a plan read from a
// file, where nothing was compared).
nlohmann::json CountsJson(const PlanTotals& totals, const SyncPlanCounts* counts) {
  nlohmann::json j = {{"transfers", totals.transfers},
                      {"transfer_bytes", totals.transfer_bytes},
                      {"deletes", totals.deletes}};
  if (counts != nullptr) {
    j["unchanged"] = counts->unchanged;
    j["excluded"] = counts->excluded;
    j["kept"] = counts->kept;
  }
  return j;
}

// "3 to upload (1.0 MiB), 1 to delete, 96 unchanged, ..." for a plan; "3 uploaded (1.0 MiB),
// 1 deleted, ..." once done.
std::string CountsLine(const SyncEnds& ends, const PlanTotals& totals, const SyncPlanCounts* counts,
                       bool done) {
  const bool up = ends.direction == SyncDirection::kUpload;
  const char* transferred =
      done ? (up ? " uploaded (" : " downloaded (") : (up ? " to upload (" : " to download (");
  std::string s = std::to_string(totals.transfers) + transferred +
                  HumanBytes(totals.transfer_bytes) + "), " + std::to_string(totals.deletes) +
                  (done ? " deleted" : " to delete");
  if (counts == nullptr) return s;
  s += ", " + std::to_string(counts->unchanged) + " unchanged";
  if (counts->excluded > 0) s += ", " + std::to_string(counts->excluded) + " excluded";
  if (counts->kept > 0) {
    s += ", " + std::to_string(counts->kept) + " only at the destination (kept; --delete removes)";
  }
  return s;
}

// --dry-run: prints the plan (as plan-file lines with --json) and changes nothing.
int ShowPlan(const SyncPlan& plan, const SyncEnds& ends, const SyncArgs& args,
             const SyncPlanCounts* counts) {
  if (args.output.json) {
    std::fputs(SyncPlanToJsonLines(plan).c_str(), stdout);
  } else if (!args.output.quiet) {
    PrintOps(plan, ends, /*dry_run=*/true);
    std::fprintf(stderr, "(dry run) %s\n", CountsLine(ends, Totals(plan), counts, false).c_str());
  }
  return std::fflush(stdout) == 0 ? kExitOk : kExitFailure;
}

// --plan FILE: writes the plan and changes nothing else.
int WritePlan(const SyncPlan& plan, const SyncEnds& ends, const SyncArgs& args,
              const SyncPlanCounts* counts) {
  if (Status st = WriteFileAtomically(args.plan_file, SyncPlanToJsonLines(plan), 0644); !st.ok()) {
    return ReportRemoteFailure(st, {});
  }
  const PlanTotals totals = Totals(plan);
  if (args.output.json) {
    nlohmann::json j = CountsJson(totals, counts);
    j["plan"] = args.plan_file;
    std::printf("%s\n", j.dump().c_str());
  } else if (!args.output.quiet) {
    std::fprintf(stderr, "plan written to %s: %s\n", WithoutControlChars(args.plan_file).c_str(),
                 CountsLine(ends, totals, counts, false).c_str());
  }
  return std::fflush(stdout) == 0 ? kExitOk : kExitFailure;
}

Status RunUploads(RemoteConnection& conn, const SyncPlan& plan, const SyncEnds& ends,
                  const BucketUploadOptions& options) {
  std::vector<UploadJob> jobs;
  std::vector<std::string> deletes;
  for (const SyncOp& op : plan.ops) {
    const std::string remote_path = JoinBucketPath(ends.remote.path, op.path);
    if (op.kind == SyncOpKind::kDelete) {
      deletes.push_back(remote_path);
    } else {
      jobs.push_back({LocalName(ends, op.path), remote_path, op.size, op.mtime_ms});
    }
  }
  return UploadToBucket(conn, ends.remote.BucketId(), jobs, options, deletes).status();
}

// Downloads first, then deletes (a failed download deletes nothing). Every path, whether
// listed by the server or read from a plan file, is checked to stay below the local root.
Status RunDownloads(RemoteConnection& conn, const SyncPlan& plan, const SyncEnds& ends,
                    TransferStats* stats) {
  std::vector<DownloadJob> jobs;
  std::vector<std::string> deletes;
  for (const SyncOp& op : plan.ops) {
    XET_ASSIGN_OR_RETURN(std::string local, LocalPathBelow(ends.local, op.path));
    if (op.kind == SyncOpKind::kDelete) {
      deletes.push_back(std::move(local));
      continue;
    }
    if (op.kind != SyncOpKind::kDownload || !op.xet_hash) {
      return Status::InvalidArgument("a download plan cannot " +
                                     std::string(SyncOpKindName(op.kind)) + " " +
                                     WithoutControlChars(op.path));
    }
    DownloadJob job;
    job.file.path = JoinBucketPath(ends.remote.path, op.path);
    job.file.size = op.size;
    job.file.mtime_ms = op.mtime_ms;
    job.file.xet_hash = *op.xet_hash;
    job.local_path = std::move(local);
    job.keep_mtime = true;
    jobs.push_back(std::move(job));
  }
  if (!jobs.empty()) {
    XET_RETURN_IF_ERROR(DownloadToFiles(conn, ends.remote.BucketId(), jobs, stats));
  }
  return DeleteLocalFiles(deletes);
}

// Carries out `plan`, then prints the operations and the summary.
int Execute(RemoteConnection& conn, TransferStats& stats, const SyncPlan& plan,
            const SyncEnds& ends, const SyncArgs& args, const SyncPlanCounts* counts) {
  const bool up = ends.direction == SyncDirection::kUpload;
  const TransferKind kind = up ? TransferKind::kUpload : TransferKind::kDownload;
  ProgressDisplay progress(stats, kind, ShouldShowProgress(args.output));
  const Status st =
      plan.ops.empty() ? Status::Ok()
      : up ? RunUploads(conn, plan, ends, {.stats = &stats, .record_sha256 = args.sha256})
           : RunDownloads(conn, plan, ends, &stats);
  progress.Stop();
  if (!st.ok()) return ReportRemoteFailure(st, conn.endpoint());
  const PlanTotals totals = Totals(plan);
  const TransferSnapshot snapshot = Snapshot(stats);
  if (args.output.json) {
    nlohmann::json j = SummaryJson(kind, snapshot, progress.ElapsedSeconds());
    j["operation"] = "sync";
    j["direction"] = SyncDirectionName(ends.direction);
    j.update(CountsJson(totals, counts));
    std::printf("%s\n", j.dump().c_str());
  } else if (!args.output.quiet) {
    PrintOps(plan, ends, /*dry_run=*/false);
    if (totals.transfers > 0) {
      std::fprintf(stderr, "%s\n",
                   FormatSummaryLine(kind, snapshot, progress.ElapsedSeconds()).c_str());
    }
    std::fprintf(stderr, "sync: %s\n", CountsLine(ends, totals, counts, true).c_str());
  }
  return std::fflush(stdout) == 0 ? kExitOk : kExitFailure;
}

int RunSync(const RemoteOptions& remote, const SyncArgs& args, const CLI::App& cmd) {
  auto ends = ResolveEnds(args);
  if (!ends.ok()) {
    PrintError(ends.status().message());
    return kExitUsage;
  }
  auto filter = FilterFromCommandLine(cmd, args);
  if (!filter.ok()) {
    PrintError(filter.status().message());
    return kExitUsage;
  }
  const bool applying = !args.apply_file.empty();
  if (applying &&
      (args.delete_extraneous || args.checksum || !filter->empty() || !args.plan_file.empty())) {
    PrintError("--apply carries out the plan as written",
               "--delete, --checksum, --include, --exclude and --plan belong to the planning run");
    return kExitUsage;
  }

  // Before any thread starts (see InterruptGuard).
  InterruptGuard guard(
      ends->direction == SyncDirection::kUpload
          ? "nothing was added to or deleted from the bucket; run the command again (data "
            "already sent is not sent again)"
          : "files already downloaded are complete; run the command again to finish");
  TransferStats stats;
  RemoteConnection conn(ResolveRemote(remote), &stats);
  SyncPlanCounts counts;
  auto plan = applying ? ReadPlanFile(args.apply_file, *ends)
                       : MakePlan(conn.hub(), *ends, args, std::move(*filter), &counts);
  if (!plan.ok()) return ReportRemoteFailure(plan.status(), conn.endpoint());
  const SyncPlanCounts* planned = applying ? nullptr : &counts;
  if (args.dry_run) return ShowPlan(*plan, *ends, args, planned);
  if (!args.plan_file.empty()) return WritePlan(*plan, *ends, args, planned);
  return Execute(conn, stats, *plan, *ends, args, planned);
}

}  // namespace

void AddSyncCommand(CLI::App& app, const std::shared_ptr<RemoteOptions>& remote, int* exit_code) {
  auto args = std::make_shared<SyncArgs>();
  CLI::App* sync = app.add_subcommand(
      "sync",
      "Make DST match SRC: one is a local directory, the other hf://buckets/NS/BUCKET[/PATH].\n"
      "  sync DIR hf://buckets/NS/B/PATH    upload what is new or changed in DIR\n"
      "  sync hf://buckets/NS/B/PATH DIR    download what is new or changed in the bucket\n"
      "A file is transferred when it is missing at DST or its size or modification time\n"
      "differs (--checksum: its Xet hash differs); sync records the source's mtime at DST, so\n"
      "the next sync of unchanged files transfers nothing. Files only at DST are kept unless\n"
      "--delete. A download is written to <file>.xetpart, verified, then renamed into place;\n"
      "nothing is written or deleted outside DIR or through a link to a directory in it.\n"
      "Filters apply in order and a later one wins, matched against the path below SRC\n"
      "('*' also matches '/'): --exclude '*' --include '*.csv' syncs only CSV files.\n"
      "--plan FILE writes the operations as JSON lines instead of running them; --apply FILE\n"
      "runs exactly those operations later (same SRC and DST).");
  sync->add_option("src", args->src, "Local directory or hf:// path")->required();
  sync->add_option("dst", args->dst, "hf:// path or local directory")->required();
  sync->add_flag("--delete", args->delete_extraneous,
                 "Delete files at DST that are not at SRC (filters protect excluded files)");
  sync->add_flag("-n,--dry-run", args->dry_run,
                 "Print what would be done and change nothing (--json: the plan as JSON lines)");
  sync->add_option("--include", args->include,
                   "Include paths matching this pattern again (repeatable; order matters)")
      ->allow_extra_args(false)
      ->type_name("PATTERN");
  sync->add_option("--exclude", args->exclude,
                   "Exclude paths matching this pattern (repeatable; order matters)")
      ->allow_extra_args(false)
      ->type_name("PATTERN");
  sync->add_flag("-c,--checksum", args->checksum,
                 "Compare Xet hashes of same-size files instead of modification times "
                 "(reads every such local file)");
  AddSha256Flag(sync, &args->sha256);
  sync->add_option("--plan", args->plan_file,
                   "Write the plan to FILE (JSON lines) and change nothing")
      ->type_name("FILE");
  sync->add_option("--apply", args->apply_file,
                   "Carry out the plan in FILE (written by --plan for the same SRC and DST)")
      ->type_name("FILE");
  AddOutputFlags(sync, &args->output);
  AddRemoteOptions(sync, remote.get());
  AddCacheOptions(sync, remote.get());
  sync->callback([=] { *exit_code = RunSync(*remote, *args, *sync); });
}

}  // namespace xet::cli
