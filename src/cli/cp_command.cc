#include "cli/cp_command.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "cli/interrupt.h"
#include "cli/output.h"
#include "cli/progress.h"
#include "cli/remote_failure.h"
#include "cli/sha256_flag.h"
#include "cli/transfer_paths.h"
#include "client/bucket_transfer/bucket_download.h"
#include "client/bucket_transfer/bucket_upload.h"
#include "client/bucket_transfer/remote_connection.h"
#include "client/bucket_transfer/remote_lookup.h"
#include "client/hub/remote_path.h"
#include "client/sync/local_tree.h"
#include "common/ascii.h"
#include "protocol/bucket_path.h"

namespace xet::cli {
namespace {

struct CpArgs {
  std::string src;
  std::string dst;
  bool recursive = false;
  bool sha256 = false;
  OutputFlags output;
};

// What an upload of `src` to `dst` consists of. Entries of a directory that cannot be
// uploaded (see ListLocalTree: special files, links to directories, names that are not valid
// bucket paths) are left out with a warning each.
Result<std::vector<UploadJob>> PlanUpload(const std::string& src, const RemotePath& dst,
                                          bool recursive) {
  std::vector<UploadJob> jobs;
  if (src == "-") {
    XET_ASSIGN_OR_RETURN(std::string target, RemoteFileTarget(dst, ""));
    jobs.push_back({"-", std::move(target), 0, 0});
    return jobs;
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(src, ec)) {
    XET_ASSIGN_OR_RETURN(LocalFileInfo file, StatLocalFile(src));
    XET_ASSIGN_OR_RETURN(std::string target, RemoteFileTarget(dst, BaseName(src)));
    jobs.push_back({src, std::move(target), file.size, file.mtime_ms});
    return jobs;
  }
  if (!recursive) {
    return Status::InvalidArgument(src + " is a directory: -r uploads what is in it");
  }
  XET_ASSIGN_OR_RETURN(LocalTree tree, ListLocalTree(src));
  for (const std::string& why : tree.skipped) {
    std::fprintf(stderr, "xetstore: warning: skipped %s/%s\n", src.c_str(), why.c_str());
  }
  std::sort(tree.files.begin(), tree.files.end(),
            [](const SyncFile& a, const SyncFile& b) { return a.path < b.path; });
  const std::string root = src.ends_with('/') ? src : src + "/";
  for (const SyncFile& f : tree.files) {
    std::string target = JoinBucketPath(dst.path, f.path);
    if (Status st = ValidateBucketPath(target); !st.ok()) {
      return st.WithContext("cannot upload " + root + f.path);
    }
    jobs.push_back({root + f.path, std::move(target), f.size, f.mtime_ms});
  }
  return jobs;
}

int RunUpload(const RemoteOptions& remote, const CpArgs& args, const RemotePath& dst) {
  auto jobs = PlanUpload(args.src, dst, args.recursive);
  if (!jobs.ok()) return ReportLocalFailure(jobs.status());
  // Before any thread starts (see InterruptGuard).
  InterruptGuard guard(
      "nothing was added to the bucket; run the command again (data already sent is not sent "
      "again)");
  TransferStats stats;
  RemoteConnection conn(ResolveRemote(remote), &stats);
  ProgressDisplay progress(stats, TransferKind::kUpload, ShouldShowProgress(args.output));
  auto uploaded =
      UploadToBucket(conn, dst.BucketId(), *jobs, {.stats = &stats, .record_sha256 = args.sha256});
  progress.Stop();
  if (!uploaded.ok()) return ReportRemoteFailure(uploaded.status(), conn.endpoint());
  if (!args.output.quiet && !args.output.json) {
    for (const UploadJob& job : *jobs) {
      std::printf("upload: %s -> hf://buckets/%s/%s\n", job.local_path.c_str(),
                  dst.BucketId().c_str(), job.remote_path.c_str());
    }
    std::fflush(stdout);
  }
  PrintTransferSummary(args.output, TransferKind::kUpload, Snapshot(stats),
                       progress.ElapsedSeconds(), stdout);
  return kExitOk;
}

RemoteOp CopyFileOp(const std::string& to, const RemoteEntry& file, const std::string& bucket) {
  RemoteOp op;
  op.kind = RemoteOp::Kind::kCopyFile;
  op.path = to;
  op.xet_hash = file.xet_hash;
  op.source_bucket = bucket;
  return op;
}

RemoteOp CopyPrefixOp(const std::string& from, const std::string& to, const std::string& bucket) {
  RemoteOp op;
  op.kind = RemoteOp::Kind::kCopyPrefix;
  op.from = from;
  op.to = to;
  op.source_bucket = bucket;
  return op;
}

// The server-side operations copying directory `src` to `dst`: one copyPrefix when both are
// proper directories; a bucket's root (which a prefix operation cannot name) is copied as its
// top-level files and directories.
Result<std::vector<RemoteOp>> PlanDirectoryCopy(HubClient& hub, const RemotePath& src,
                                                const RemotePath& dst) {
  std::vector<RemoteOp> ops;
  if (!src.path.empty() && !dst.path.empty()) {
    ops.push_back(CopyPrefixOp(src.path, dst.path, src.BucketId()));
    return ops;
  }
  XET_RETURN_IF_ERROR(
      hub.ListTree(src.BucketId(), src.path, /*recursive=*/false, [&](const RemoteEntry& e) {
        const std::string to = JoinBucketPath(dst.path, BaseName(e.path));
        ops.push_back(e.is_directory ? CopyPrefixOp(e.path, to, src.BucketId())
                                     : CopyFileOp(to, e, src.BucketId()));
        return true;
      }));
  return ops;
}

int RunRemoteCopy(const RemoteOptions& remote, const CpArgs& args, const RemotePath& src,
                  const RemotePath& dst) {
  RemoteConnection conn(ResolveRemote(remote));
  auto found = LookupRemote(conn.hub(), src);
  if (!found.ok()) return ReportRemoteFailure(found.status(), conn.endpoint());
  std::vector<RemoteOp> ops;
  std::string to;
  switch (found->kind) {
    case RemoteLookup::Kind::kMissing:
      return ReportRemoteFailure(NoSuchRemotePath(src), conn.endpoint());
    case RemoteLookup::Kind::kFile: {
      auto target = RemoteFileTarget(dst, BaseName(src.path));
      if (!target.ok()) return ReportRemoteFailure(target.status(), {});
      to = *target;
      ops.push_back(CopyFileOp(to, found->file, src.BucketId()));
      break;
    }
    case RemoteLookup::Kind::kDirectory: {
      if (!args.recursive) {
        return ReportRemoteFailure(
            Status::InvalidArgument(src.ToString() + " is a directory: -r copies what is in it"),
            {});
      }
      if (src.BucketId() == dst.BucketId() && src.path == dst.path) {
        return ReportRemoteFailure(
            Status::InvalidArgument("source and destination are the same directory"), {});
      }
      auto planned = PlanDirectoryCopy(conn.hub(), src, dst);
      if (!planned.ok()) return ReportRemoteFailure(planned.status(), conn.endpoint());
      ops = std::move(*planned);
      to = dst.path;
      break;
    }
  }
  if (!ops.empty()) {
    auto outcome = conn.hub().Batch(dst.BucketId(), ops);
    if (!outcome.ok()) return ReportRemoteFailure(outcome.status(), conn.endpoint());
    if (!outcome->failed.empty()) {
      const auto& f = outcome->failed.front();
      PrintError("copy to " + f.path + " in " + dst.BucketId() + " failed: " + f.error);
      return kExitFailure;
    }
  }
  const std::string dst_text = "hf://buckets/" + dst.BucketId() + (to.empty() ? "" : "/" + to);
  if (args.output.json) {
    std::printf("%s\n", nlohmann::json{{"operation", "copy"},
                                       {"source", src.ToString()},
                                       {"destination", dst_text},
                                       {"server_side", true}}
                            .dump()
                            .c_str());
  } else if (!args.output.quiet) {
    std::printf("copy: %s -> %s\n", src.ToString().c_str(), dst_text.c_str());
  }
  return std::fflush(stdout) == 0 ? kExitOk : kExitFailure;
}

// What a download of `src` (found as `found`) to the local `dst` consists of.
Result<std::vector<DownloadJob>> PlanDownload(HubClient& hub, const RemotePath& src,
                                              const RemoteLookup& found, const std::string& dst,
                                              bool recursive) {
  std::vector<DownloadJob> jobs;
  switch (found.kind) {
    case RemoteLookup::Kind::kMissing:
      return NoSuchRemotePath(src);
    case RemoteLookup::Kind::kFile:
      jobs.push_back({.file = found.file,
                      .local_path = LocalFileTarget(dst, BaseName(found.file.path)),
                      .write_into_special_file = true});
      return jobs;
    case RemoteLookup::Kind::kDirectory:
      break;
  }
  if (!recursive) {
    return Status::InvalidArgument(src.ToString() + " is a directory: -r copies what is in it");
  }
  const std::string prefix = src.path.empty() ? std::string() : src.path + "/";
  Status bad;
  XET_RETURN_IF_ERROR(
      hub.ListTree(src.BucketId(), src.path, /*recursive=*/true, [&](const RemoteEntry& e) {
        if (e.is_directory) return true;
        // Never trust a listing with where a file is written.
        if (!e.path.starts_with(prefix)) {
          bad = Status::Corruption("the server listed '" + WithoutControlChars(e.path) +
                                   "' under " + src.ToString());
          return false;
        }
        auto local = LocalPathBelow(dst, std::string_view(e.path).substr(prefix.size()));
        if (!local.ok()) {
          bad = local.status().WithContext("download " + src.ToString());
          return false;
        }
        jobs.push_back(
            {.file = e, .local_path = std::move(*local), .write_into_special_file = true});
        return true;
      }));
  XET_RETURN_IF_ERROR(bad);
  return jobs;
}

int RunDownload(const RemoteOptions& remote, const CpArgs& args, const RemotePath& src) {
  const bool to_stdout = args.dst == "-";
  // Before any thread starts (see InterruptGuard).
  InterruptGuard guard(to_stdout ? std::string()
                                 : "no destination file was half-written; partial downloads are "
                                   "kept as <file>.xetpart and resume when the command runs again");
  TransferStats stats;
  RemoteConnection conn(ResolveRemote(remote), &stats);
  auto found = LookupRemote(conn.hub(), src);
  if (!found.ok()) return ReportRemoteFailure(found.status(), conn.endpoint());
  if (to_stdout && found->kind == RemoteLookup::Kind::kDirectory) {
    return ReportRemoteFailure(
        Status::InvalidArgument(src.ToString() + " is a directory; only a file goes to stdout"),
        {});
  }
  std::vector<DownloadJob> jobs;
  if (!to_stdout || found->kind != RemoteLookup::Kind::kFile) {
    auto planned = PlanDownload(conn.hub(), src, *found, args.dst, args.recursive);
    if (!planned.ok()) return ReportRemoteFailure(planned.status(), conn.endpoint());
    jobs = std::move(*planned);
  }
  ProgressDisplay progress(stats, TransferKind::kDownload, ShouldShowProgress(args.output));
  const Status st = to_stdout ? DownloadToStdout(conn, src.BucketId(), found->file, &stats)
                              : DownloadToFiles(conn, src.BucketId(), jobs, &stats);
  progress.Stop();
  if (!st.ok()) return ReportRemoteFailure(st, conn.endpoint());
  if (!to_stdout && !args.output.quiet && !args.output.json) {
    for (const DownloadJob& job : jobs) {
      std::printf("download: hf://buckets/%s/%s -> %s\n", src.BucketId().c_str(),
                  job.file.path.c_str(), job.local_path.c_str());
    }
    std::fflush(stdout);
  }
  PrintTransferSummary(args.output, TransferKind::kDownload, Snapshot(stats),
                       progress.ElapsedSeconds(), to_stdout ? stderr : stdout);
  return kExitOk;
}

int RunCp(const RemoteOptions& remote, const CpArgs& args) {
  const bool src_remote = IsRemotePath(args.src);
  const bool dst_remote = IsRemotePath(args.dst);
  if (!src_remote && !dst_remote) {
    PrintError("neither '" + args.src + "' nor '" + args.dst + "' is a bucket path",
               "one side of cp is hf://buckets/NAMESPACE/BUCKET[/PATH]");
    return kExitUsage;
  }
  std::optional<RemotePath> src, dst;
  if (src_remote) {
    auto p = ParseRemotePath(args.src);
    if (!p.ok()) return ReportRemoteFailure(p.status(), {});
    src = std::move(*p);
  }
  if (dst_remote) {
    auto p = ParseRemotePath(args.dst);
    if (!p.ok()) return ReportRemoteFailure(p.status(), {});
    dst = std::move(*p);
  }
  if (!src_remote) return RunUpload(remote, args, *dst);
  if (dst_remote) return RunRemoteCopy(remote, args, *src, *dst);
  return RunDownload(remote, args, *src);
}

}  // namespace

void AddCpCommand(CLI::App& app, const std::shared_ptr<RemoteOptions>& remote, int* exit_code) {
  auto args = std::make_shared<CpArgs>();
  CLI::App* cp = app.add_subcommand(
      "cp",
      "Copy files to, from and between buckets.\n"
      "  cp FILE hf://buckets/NS/B/PATH     upload FILE as PATH\n"
      "  cp FILE hf://buckets/NS/B/DIR/     upload FILE into DIR/ (also the bucket's root)\n"
      "  cp -r DIR hf://buckets/NS/B/PATH   upload everything in DIR below PATH/\n"
      "  cp - hf://buckets/NS/B/PATH        upload standard input as PATH\n"
      "  cp hf://buckets/NS/B/PATH FILE     download PATH (into FILE if it is a directory)\n"
      "  cp -r hf://buckets/NS/B/DIR LOCAL  download everything below DIR into LOCAL/\n"
      "  cp hf://buckets/NS/B/PATH -        write PATH to standard output\n"
      "  cp hf://buckets/NS/B/X hf://buckets/NS2/B2/Y   copy on the server (-r for a\n"
      "                                     directory); no file data is transferred\n"
      "Only chunks the server does not have are sent. Files appear in the bucket once all\n"
      "their data is stored, in one atomic step; an interrupted upload adds nothing.\n"
      "Downloads are written to <file>.xetpart, verified, then renamed into place; an\n"
      "interrupted download resumes from its .xetpart when run again.\n"
      "On a terminal, progress goes to stderr; a summary line follows (bytes read, bytes\n"
      "sent, deduplicated bytes, time).");
  cp->add_option("src", args->src, "Local file or directory, '-' (stdin), or hf:// path")
      ->required();
  cp->add_option("dst", args->dst, "hf:// path, a local path, or '-' (stdout)")->required();
  cp->add_flag("-r,--recursive", args->recursive, "Copy a directory and everything in it");
  AddSha256Flag(cp, &args->sha256);
  AddOutputFlags(cp, &args->output);
  AddRemoteOptions(cp, remote.get());
  AddCacheOptions(cp, remote.get());
  cp->callback([=] { *exit_code = RunCp(*remote, *args); });
}

}  // namespace xet::cli
