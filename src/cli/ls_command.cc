#include "cli/ls_command.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/output.h"
#include "cli/remote_failure.h"
#include "cli/transfer_paths.h"
#include "cli/tree_view.h"
#include "client/bucket_transfer/remote_connection.h"
#include "client/bucket_transfer/remote_lookup.h"
#include "client/hub/remote_path.h"
#include "common/human_bytes.h"

namespace xet::cli {
namespace {

struct LsArgs {
  std::string path;
  bool human = false;
  bool recursive = false;
  bool tree = false;
  bool json = false;
};

std::string SizeText(uint64_t bytes, bool human) {
  return human ? HumanBytes(bytes) : std::to_string(bytes);
}

nlohmann::json EntryJson(const RemoteEntry& e) {
  if (e.is_directory) return {{"type", "directory"}, {"path", e.path}};
  nlohmann::json j = {{"type", "file"},
                      {"path", e.path},
                      {"size", e.size},
                      {"xetHash", e.xet_hash.ToHex()},
                      {"mtime", e.mtime_ms}};
  if (!e.uploaded_at.empty()) j["uploadedAt"] = e.uploaded_at;
  if (!e.content_type.empty()) j["contentType"] = e.content_type;
  return j;
}

// "   1048576  2024-05-06 07:08:09  data/a.bin" / "       DIR                       data/sub/"
std::string EntryLine(const RemoteEntry& e, bool human) {
  char buf[64];
  if (e.is_directory) {
    std::snprintf(buf, sizeof(buf), "%12s  %19s  ", "DIR", "");
    return buf + e.path + "/";
  }
  std::snprintf(buf, sizeof(buf), "%12s  %19s  ", SizeText(e.size, human).c_str(),
                FormatUtcTime(e.mtime_ms).c_str());
  return buf + e.path;
}

int RunLs(const RemoteOptions& remote, const LsArgs& args) {
  auto where = ParseRemotePath(args.path);
  if (!where.ok()) return ReportRemoteFailure(where.status(), {});
  RemoteConnection conn(ResolveRemote(remote));
  const bool recursive = args.recursive || args.tree;
  std::vector<TreeItem> tree;
  uint64_t count = 0;
  Status st =
      conn.hub().ListTree(where->BucketId(), where->path, recursive, [&](const RemoteEntry& e) {
        ++count;
        if (args.json) {
          std::printf("%s\n", EntryJson(e).dump().c_str());
        } else if (args.tree) {
          // Relative to the listed prefix; a prefix naming a file lists that file alone.
          const std::string relative =
              e.path == where->path
                  ? std::string(BaseName(e.path))
                  : e.path.substr(where->path.empty() ? 0 : where->path.size() + 1);
          tree.push_back({relative, e.is_directory, e.size});
        } else {
          std::printf("%s\n", EntryLine(e, args.human).c_str());
        }
        return true;
      });
  if (!st.ok()) return ReportRemoteFailure(st, conn.endpoint());
  if (count == 0 && !where->path.empty()) {
    return ReportRemoteFailure(NoSuchRemotePath(*where), conn.endpoint());
  }
  if (args.tree) {
    const bool human = args.human;
    std::fputs(RenderTree(where->ToString(), tree,
                          [human](uint64_t size) { return SizeText(size, human); })
                   .c_str(),
               stdout);
  }
  return std::fflush(stdout) == 0 ? kExitOk : kExitFailure;
}

}  // namespace

void AddLsCommand(CLI::App& app, const std::shared_ptr<RemoteOptions>& remote, int* exit_code) {
  auto args = std::make_shared<LsArgs>();
  CLI::App* ls = app.add_subcommand(
      "ls",
      "List the files and directories under a bucket path, one per line:\n"
      "  <size in bytes>  <modified, UTC>  <path in the bucket>   (files)\n"
      "  DIR                               <path in the bucket>/  (directories)\n"
      "A path naming a file lists that file. A path that names nothing is an error (exit 3).");
  ls->set_help_flag("--help", "Print this help message and exit");
  ls->add_option("path", args->path, "hf://buckets/NAMESPACE/BUCKET[/PREFIX]")->required();
  ls->add_flag("-h,--human-readable", args->human, "Sizes in KiB, MiB, GiB...");
  ls->add_flag("-R,--recursive", args->recursive,
               "List every file below the path (directories are not listed themselves)");
  ls->add_flag("--tree", args->tree, "Draw the files below the path as a tree (implies -R)");
  ls->add_flag("--json", args->json,
               "One JSON object per line (NDJSON), streamed: {type: \"file\", path, size,\n"
               "xetHash, mtime (unix ms), uploadedAt, contentType?} or {type: \"directory\", "
               "path}")
      ->excludes("--tree");
  AddRemoteOptions(ls, remote.get());
  ls->callback([=] { *exit_code = RunLs(*remote, *args); });
}

}  // namespace xet::cli
