// Where `cp` puts things: how a source name maps onto a destination, in a bucket or on the
// local disk. Path logic shared by the transfer commands.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "client/hub/remote_path.h"
#include "common/result.h"

namespace xet::cli {

// "a/b" + "c" -> "a/b/c"; an empty side is left out ("" + "c" -> "c").
std::string JoinBucketPath(std::string_view dir, std::string_view name);

// The last '/'-separated segment of `path` ("a/b.txt" -> "b.txt"; "" stays "").
std::string_view BaseName(std::string_view path);

// The path a single file named `source_name` gets in the bucket of `dst`: inside dst's
// path when dst names a directory (the bucket's root, or a path ending in '/'), else dst's
// path itself. InvalidArgument when the result is not a valid bucket path (e.g. a local
// name with a backslash) or `source_name` is empty where one is needed.
Result<std::string> RemoteFileTarget(const RemotePath& dst, std::string_view source_name);

// The size and modification time of a local file.
struct LocalFileInfo {
  uint64_t size = 0;
  int64_t mtime_ms = 0;  // unix milliseconds (client/sync/local_tree.h UnixMillis)
};

// Stats the regular file `path` (symbolic links followed). NotFound when absent;
// InvalidArgument when it is a directory or not a regular file. (Directories are listed
// with client/sync/local_tree.h ListLocalTree.)
Result<LocalFileInfo> StatLocalFile(const std::string& path);

// Where a file named `source_name` lands locally for destination `dst`: inside `dst` when
// it is an existing directory or ends in '/', else `dst` itself.
std::string LocalFileTarget(const std::string& dst, std::string_view source_name);

// The local path of `rel`, a path below `root` named by a bucket listing or a plan file.
// Such names are untrusted, so that nothing is ever written or deleted outside `root`:
// Corruption unless `rel` is a valid bucket path (protocol/bucket_path.h: relative, no "."
// or ".." segment, no empty segment), and InvalidArgument when a directory on the way
// below `root` is a symbolic link. `root` itself may be a link (the user named it).
Result<std::string> LocalPathBelow(const std::string& root, std::string_view rel);

}  // namespace xet::cli
