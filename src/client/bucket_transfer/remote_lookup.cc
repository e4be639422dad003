#include "client/bucket_transfer/remote_lookup.h"

namespace xet {

Result<RemoteLookup> LookupRemote(HubClient& hub, const RemotePath& path) {
  RemoteLookup out;
  if (path.path.empty()) out.kind = RemoteLookup::Kind::kDirectory;
  XET_RETURN_IF_ERROR(
      hub.ListTree(path.BucketId(), path.path, /*recursive=*/false, [&](const RemoteEntry& e) {
        if (!e.is_directory && e.path == path.path) {
          out.kind = RemoteLookup::Kind::kFile;
          out.file = e;
        } else {
          out.kind = RemoteLookup::Kind::kDirectory;
        }
        return false;  // the first item decides
      }));
  return out;
}

Status NoSuchRemotePath(const RemotePath& path) {
  return Status::NotFound(path.ToString() + ": no such file or directory in the bucket");
}

}  // namespace xet
