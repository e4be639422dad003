#include "cli/bucket_commands.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/output.h"
#include "cli/remote_failure.h"
#include "client/bucket_transfer/remote_connection.h"
#include "client/hub/remote_path.h"
#include "common/human_bytes.h"
#include "protocol/bucket_path.h"

namespace xet::cli {
namespace {

// A bucket argument: "NS/BUCKET" or "hf://buckets/NS/BUCKET" (without a path inside).
Result<std::string> ParseBucketArg(const std::string& arg) {
  if (IsRemotePath(arg)) {
    XET_ASSIGN_OR_RETURN(RemotePath p, ParseRemotePath(arg));
    if (!p.path.empty()) {
      return Status::InvalidArgument("'" + arg + "' names a path inside a bucket, not a bucket");
    }
    return p.BucketId();
  }
  // Same rules as the hf:// form, so the message names the broken one.
  XET_ASSIGN_OR_RETURN(RemotePath p, ParseRemotePath("hf://buckets/" + arg));
  if (!p.path.empty() || p.trailing_slash) {
    return Status::InvalidArgument("'" + arg + "': a bucket is named NAMESPACE/BUCKET");
  }
  return p.BucketId();
}

nlohmann::json BucketJson(const RemoteBucket& b) {
  return {{"id", b.id},
          {"private", b.is_private},
          {"size", b.size},
          {"totalFiles", b.total_files},
          {"createdAt", b.created_at}};
}

std::string SizeText(uint64_t bytes, bool human) {
  return human ? HumanBytes(bytes) : std::to_string(bytes);
}

struct CreateArgs {
  std::string bucket;
  bool is_public = false;
  bool is_private = false;
  bool exist_ok = false;
};

int RunCreate(const RemoteOptions& remote, const CreateArgs& args) {
  auto id = ParseBucketArg(args.bucket);
  if (!id.ok()) return ReportRemoteFailure(id.status(), {});
  RemoteConnection conn(ResolveRemote(remote));
  auto created = conn.hub().CreateBucket(*id, !args.is_public);
  if (!created.ok()) {
    if (args.exist_ok && created.status().code() == Status::Code::kAlreadyExists) {
      std::printf("bucket hf://buckets/%s already exists\n", id->c_str());
      return kExitOk;
    }
    if (created.status().code() == Status::Code::kAlreadyExists) {
      PrintError(created.status().message(), "--exist-ok accepts an existing bucket");
      return kExitFailure;
    }
    return ReportRemoteFailure(created.status(), conn.endpoint());
  }
  std::printf("created %s bucket hf://buckets/%s\n", args.is_public ? "public" : "private",
              id->c_str());
  return kExitOk;
}

struct ListArgs {
  std::string ns = "me";
  bool json = false;
  bool human = false;
};

int RunList(const RemoteOptions& remote, const ListArgs& args) {
  if (Status st = ValidateBucketName(args.ns, "namespace"); !st.ok()) {
    return ReportRemoteFailure(st, {});
  }
  RemoteConnection conn(ResolveRemote(remote));
  auto buckets = conn.hub().ListBuckets(args.ns);
  if (!buckets.ok()) return ReportRemoteFailure(buckets.status(), conn.endpoint());
  if (args.json) {
    for (const RemoteBucket& b : *buckets) std::printf("%s\n", BucketJson(b).dump().c_str());
    return kExitOk;
  }
  if (buckets->empty()) return kExitOk;
  std::printf("%-40s %-8s %10s %12s  %s\n", "BUCKET", "ACCESS", "FILES", "SIZE", "CREATED");
  for (const RemoteBucket& b : *buckets) {
    std::printf("%-40s %-8s %10llu %12s  %s\n", b.id.c_str(), b.is_private ? "private" : "public",
                static_cast<unsigned long long>(b.total_files),
                SizeText(b.size, args.human).c_str(), b.created_at.c_str());
  }
  return kExitOk;
}

int RunInfo(const RemoteOptions& remote, const std::string& bucket, bool json, bool human) {
  auto id = ParseBucketArg(bucket);
  if (!id.ok()) return ReportRemoteFailure(id.status(), {});
  RemoteConnection conn(ResolveRemote(remote));
  auto b = conn.hub().GetBucket(*id);
  if (!b.ok()) return ReportRemoteFailure(b.status(), conn.endpoint());
  if (json) {
    std::printf("%s\n", BucketJson(*b).dump().c_str());
    return kExitOk;
  }
  std::printf(
      "bucket:  %s\nurl:     hf://buckets/%s\naccess:  %s\nfiles:   %llu\nsize:    %s\n"
      "created: %s\n",
      b->id.c_str(), b->id.c_str(), b->is_private ? "private" : "public",
      static_cast<unsigned long long>(b->total_files), SizeText(b->size, human).c_str(),
      b->created_at.c_str());
  return kExitOk;
}

int RunDelete(const RemoteOptions& remote, const std::string& bucket, bool yes) {
  auto id = ParseBucketArg(bucket);
  if (!id.ok()) return ReportRemoteFailure(id.status(), {});
  if (!yes) {
    PrintError("refusing to delete bucket " + *id + " without --yes",
               "deleting a bucket removes every file in it; add --yes if that is what you want");
    return kExitUsage;
  }
  RemoteConnection conn(ResolveRemote(remote));
  if (Status st = conn.hub().DeleteBucket(*id); !st.ok()) {
    return ReportRemoteFailure(st, conn.endpoint());
  }
  std::printf("deleted bucket hf://buckets/%s\n", id->c_str());
  return kExitOk;
}

int RunMove(const RemoteOptions& remote, const std::string& from, const std::string& to) {
  auto from_id = ParseBucketArg(from);
  if (!from_id.ok()) return ReportRemoteFailure(from_id.status(), {});
  auto to_id = ParseBucketArg(to);
  if (!to_id.ok()) return ReportRemoteFailure(to_id.status(), {});
  RemoteConnection conn(ResolveRemote(remote));
  if (Status st = conn.hub().MoveBucket(*from_id, *to_id); !st.ok()) {
    return ReportRemoteFailure(st, conn.endpoint());
  }
  std::printf("moved bucket hf://buckets/%s to hf://buckets/%s\n", from_id->c_str(),
              to_id->c_str());
  return kExitOk;
}

}  // namespace

void AddBucketCommands(CLI::App& app, const std::shared_ptr<RemoteOptions>& remote,
                       int* exit_code) {
  CLI::App* buckets = app.add_subcommand(
      "buckets",
      "Create, list, inspect, delete and rename buckets. A bucket is a mutable set of files\n"
      "named NAMESPACE/BUCKET (also written hf://buckets/NAMESPACE/BUCKET); buckets are\n"
      "private unless created with --public.");
  buckets->require_subcommand(1);

  auto create_args = std::make_shared<CreateArgs>();
  CLI::App* create = buckets->add_subcommand("create", "Create a bucket (private unless --public)");
  create->add_option("bucket", create_args->bucket, "NAMESPACE/BUCKET")->required();
  auto* pub =
      create->add_flag("--public", create_args->is_public, "Anyone may read it, without a token");
  create
      ->add_flag("--private", create_args->is_private,
                 "Only tokens whose scopes include it may read it (the default)")
      ->excludes(pub);
  create->add_flag("--exist-ok", create_args->exist_ok,
                   "Succeed if the bucket exists already (it is left as it is)");
  AddRemoteOptions(create, remote.get());
  create->callback([=] { *exit_code = RunCreate(*remote, *create_args); });

  auto list_args = std::make_shared<ListArgs>();
  CLI::App* list = buckets->add_subcommand(
      "list",
      "List the buckets of a namespace that the token can read, one per line (BUCKET, ACCESS,\n"
      "FILES, SIZE, CREATED). Without NAMESPACE: every namespace ('me').");
  list->set_help_flag("--help", "Print this help message and exit");
  list->add_option("namespace", list_args->ns, "Namespace to list (default: all, 'me')");
  list->add_flag("--json", list_args->json,
                 "One JSON object per line: {id, private, size, totalFiles, createdAt}");
  list->add_flag("-h,--human-readable", list_args->human, "Sizes in KiB, MiB, GiB...");
  AddRemoteOptions(list, remote.get());
  list->callback([=] { *exit_code = RunList(*remote, *list_args); });

  auto info_bucket = std::make_shared<std::string>();
  auto info_json = std::make_shared<bool>(false);
  auto info_human = std::make_shared<bool>(false);
  CLI::App* info = buckets->add_subcommand(
      "info", "Show a bucket: access, number of files, total size, creation time");
  info->set_help_flag("--help", "Print this help message and exit");
  info->add_option("bucket", *info_bucket, "NAMESPACE/BUCKET")->required();
  info->add_flag("--json", *info_json,
                 "One JSON object: {id, private, size, totalFiles, createdAt}");
  info->add_flag("-h,--human-readable", *info_human, "Size in KiB, MiB, GiB...");
  AddRemoteOptions(info, remote.get());
  info->callback([=] { *exit_code = RunInfo(*remote, *info_bucket, *info_json, *info_human); });

  auto delete_bucket = std::make_shared<std::string>();
  auto delete_yes = std::make_shared<bool>(false);
  CLI::App* del = buckets->add_subcommand(
      "delete", "Delete a bucket and every file in it. Refuses without --yes.");
  del->add_option("bucket", *delete_bucket, "NAMESPACE/BUCKET")->required();
  del->add_flag("-y,--yes", *delete_yes, "Really delete the bucket and its files");
  AddRemoteOptions(del, remote.get());
  del->callback([=] { *exit_code = RunDelete(*remote, *delete_bucket, *delete_yes); });

  auto move_from = std::make_shared<std::string>();
  auto move_to = std::make_shared<std::string>();
  CLI::App* move = buckets->add_subcommand(
      "move",
      "Rename a bucket, or move it to another namespace, with all its files (one step on the\n"
      "server; no data is copied). The token needs write access to both names.");
  move->add_option("from", *move_from, "Current NAMESPACE/BUCKET")->required();
  move->add_option("to", *move_to, "New NAMESPACE/BUCKET")->required();
  AddRemoteOptions(move, remote.get());
  move->callback([=] { *exit_code = RunMove(*remote, *move_from, *move_to); });
}

}  // namespace xet::cli
