// What a remote path names in its bucket — a file, a directory or nothing — found with one
// listing request (the tree of a file's path lists that file alone).
#pragma once

#include "client/hub/hub_client.h"
#include "client/hub/remote_path.h"
#include "common/result.h"

namespace xet {

struct RemoteLookup {
  enum class Kind { kMissing, kFile, kDirectory };
  Kind kind = Kind::kMissing;
  RemoteEntry file;  // kFile: the entry
};

// The bucket's root is always a directory (an empty bucket included). Errors of the listing
// (NotFound for an unknown or unreadable bucket, ...) are returned as they are.
Result<RemoteLookup> LookupRemote(HubClient& hub, const RemotePath& path);

// NotFound "<hf:// path>: no such file or directory in the bucket".
Status NoSuchRemotePath(const RemotePath& path);

}  // namespace xet
