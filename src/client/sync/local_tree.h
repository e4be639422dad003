// Listing a local directory tree for sync: every regular file under a root, with its size
// and mtime, from one stat per entry (no file is opened).
//
// What is listed:
//   - regular files, and symbolic links to regular files (the target's size and mtime:
//     its content is what an upload reads);
//   - directories are descended into; symbolic links to directories are not followed
//     (no loops, no escaping the root) and are reported as skipped;
//   - anything else (dangling links, sockets, FIFOs, devices) is reported as skipped, as is a
//     file whose relative path is not a valid bucket path (protocol/bucket_path.h: not UTF-8,
//     control characters, '\\', longer than 1024 bytes), since it could not be uploaded.
// A directory that cannot be read fails the whole listing: a partial listing would make
// `sync --delete` remove the remote copies of the files it missed.
// Mtimes are unix milliseconds rounded down; a time before 1970 is recorded as 0
// ("unknown", see sync_plan.h).
#pragma once

#include <sys/stat.h>

#include <string>
#include <vector>

#include "client/sync/sync_plan.h"
#include "common/result.h"

namespace xet {

struct LocalTree {
  std::vector<SyncFile> files;       // relative '/'-separated paths, in no particular order
  std::vector<std::string> skipped;  // "<relative path>: <why>", one per skipped entry
};

// Lists `root`, which must be a directory (NotFound when it does not exist, InvalidArgument
// when it is something else, IoError when part of it cannot be read).
Result<LocalTree> ListLocalTree(const std::string& root);

// A stat time as unix milliseconds, rounded down; 0 for times before 1970.
int64_t UnixMillis(const struct timespec& t);

// The hasher of --checksum: the Xet file hash of "<root>/<file.path>" (client/upload/file_hasher.h,
// no SHA-256), read in full.
SyncHasher MakeLocalHasher(std::string root);

}  // namespace xet
