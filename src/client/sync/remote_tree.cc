#include "client/sync/remote_tree.h"

#include <string_view>

#include "protocol/bucket_path.h"

namespace xet {

Result<std::vector<SyncFile>> ListRemoteTree(HubClient& hub, const std::string& bucket_id,
                                             const std::string& prefix) {
  XET_ASSIGN_OR_RETURN(const std::string dir, NormalizeBucketPrefix(prefix));
  const std::string strip = dir.empty() ? "" : dir + "/";
  std::vector<SyncFile> files;
  XET_RETURN_IF_ERROR(hub.ListTree(bucket_id, dir, /*recursive=*/true, [&](const RemoteEntry& e) {
    if (e.is_directory || !e.path.starts_with(strip) || e.path.size() == strip.size()) {
      return true;
    }
    files.push_back({e.path.substr(strip.size()), e.size, e.mtime_ms, e.xet_hash});
    return true;
  }));
  return files;
}

}  // namespace xet
