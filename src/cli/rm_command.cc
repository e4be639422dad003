#include "cli/rm_command.h"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "cli/output.h"
#include "cli/remote_failure.h"
#include "client/bucket_transfer/remote_connection.h"
#include "client/bucket_transfer/remote_lookup.h"
#include "client/hub/remote_path.h"

namespace xet::cli {
namespace {

struct RmArgs {
  std::vector<std::string> paths;
  bool recursive = false;
  bool dry_run = false;
  bool quiet = false;
};

// The files `target` stands for: itself when it names a file; with `recursive`, every file
// below it when it names a directory.
Status CollectFiles(HubClient& hub, const RemotePath& target, bool recursive,
                    std::vector<std::string>* files) {
  XET_ASSIGN_OR_RETURN(RemoteLookup found, LookupRemote(hub, target));
  switch (found.kind) {
    case RemoteLookup::Kind::kMissing:
      return NoSuchRemotePath(target);
    case RemoteLookup::Kind::kFile:
      files->push_back(found.file.path);
      return Status::Ok();
    case RemoteLookup::Kind::kDirectory:
      break;
  }
  if (!recursive) {
    return Status::InvalidArgument(target.ToString() +
                                   " is a directory: --recursive removes everything in it");
  }
  return hub.ListTree(target.BucketId(), target.path, /*recursive=*/true,
                      [&](const RemoteEntry& e) {
                        if (!e.is_directory) files->push_back(e.path);
                        return true;
                      });
}

int RunRm(const RemoteOptions& remote, const RmArgs& args) {
  std::vector<RemotePath> targets;
  for (const std::string& arg : args.paths) {
    auto p = ParseRemotePath(arg);
    if (!p.ok()) return ReportRemoteFailure(p.status(), {});
    targets.push_back(std::move(*p));
  }
  RemoteConnection conn(ResolveRemote(remote));
  // Everything is resolved before anything is removed: a bad argument removes nothing.
  std::map<std::string, std::vector<std::string>> by_bucket;  // bucket id -> paths
  for (const RemotePath& t : targets) {
    if (Status st = CollectFiles(conn.hub(), t, args.recursive, &by_bucket[t.BucketId()]);
        !st.ok()) {
      return ReportRemoteFailure(st, conn.endpoint());
    }
  }
  for (const auto& [bucket, paths] : by_bucket) {
    std::vector<RemoteOp> ops;
    for (const std::string& path : paths) {
      RemoteOp op;
      op.kind = RemoteOp::Kind::kDeleteFile;
      op.path = path;
      ops.push_back(std::move(op));
    }
    if (!args.dry_run && !ops.empty()) {
      auto outcome = conn.hub().Batch(bucket, ops);
      if (!outcome.ok()) return ReportRemoteFailure(outcome.status(), conn.endpoint());
      if (!outcome->failed.empty()) {
        const auto& f = outcome->failed.front();
        PrintError("remove " + f.path + " from " + bucket + ": " + f.error);
        return kExitFailure;
      }
    }
    if (!args.quiet) {
      for (const std::string& path : paths) {
        std::printf("%sdelete: hf://buckets/%s/%s\n", args.dry_run ? "(dry run) " : "",
                    bucket.c_str(), path.c_str());
      }
    }
  }
  return std::fflush(stdout) == 0 ? kExitOk : kExitFailure;
}

}  // namespace

void AddRmCommand(CLI::App& app, const std::shared_ptr<RemoteOptions>& remote, int* exit_code) {
  auto args = std::make_shared<RmArgs>();
  CLI::App* rm = app.add_subcommand(
      "rm",
      "Remove files from buckets. Every path is checked first (a path that names nothing is an\n"
      "error and nothing is removed), then each bucket's files go in one atomic batch.\n"
      "Prints one 'delete: <path>' line per file removed.");
  rm->add_option("paths", args->paths, "hf://buckets/NAMESPACE/BUCKET/PATH (one or more)")
      ->required();
  rm->add_flag("-r,--recursive", args->recursive,
               "Remove every file under a directory path (the bucket's root included; the "
               "bucket itself stays)");
  rm->add_flag("-n,--dry-run", args->dry_run,
               "Print what would be removed ('(dry run) delete: ...') and remove nothing");
  rm->add_flag("-q,--quiet", args->quiet, "Print nothing but errors");
  AddRemoteOptions(rm, remote.get());
  rm->callback([=] { *exit_code = RunRm(*remote, *args); });
}

}  // namespace xet::cli
