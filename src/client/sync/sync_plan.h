// Sync planning: given what is at the source and what is at the destination, decide which
// files to transfer and which to delete. Pure: no I/O of its own (checksum mode asks a
// caller-supplied hasher for the hashes it needs), so every rule is unit-testable.
//
// Both listings are plain file lists (no directories) with paths relative to the sync root,
// '/'-separated. A path is in at most one entry per listing.
//
// Rules, for each path included by the filter (client/sync/path_filter.h); paths the filter
// excludes are neither transferred nor deleted, on either side:
//   - at the source only                     → transfer, reason kNew
//   - on both sides, sizes differ            → transfer, reason kSizeChanged
//   - on both sides, same size:
//       default (size + mtime): mtimes differ → transfer, reason kMtimeChanged
//       checksum mode: Xet file hashes differ → transfer, reason kContentChanged
//       otherwise unchanged (checksum mode ignores mtimes entirely)
//   - at the destination only: with `delete_extraneous` → delete, reason kNotInSource;
//                              without it, kept and counted
// Mtimes are compared for equality at millisecond precision (like rsync; `aws s3 sync`
// asks whether the source is newer instead): sync records the source's mtime at the destination —
// an upload sends the local mtime as the batch's addFile "mtime", a download sets the local
// file's mtime to the remote one — so an unchanged pair compares equal in both directions,
// and a destination that was changed after the last sync (newer or older) is replaced.
// A remote file added without an mtime lists its upload time, so it differs from the local
// copy once and is then recorded with the local mtime.
//
// Plan order: transfers in path order (byte-wise), then deletes in path order, so a plan
// that fails part-way has deleted nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "client/sync/path_filter.h"
#include "common/result.h"
#include "format/hash.h"

namespace xet {

enum class SyncDirection {
  kUpload,    // local → remote
  kDownload,  // remote → local
};

// One file of a listing, local or remote.
struct SyncFile {
  std::string path;  // relative to the sync root, '/'-separated
  uint64_t size = 0;
  int64_t mtime_ms = 0;          // unix milliseconds; 0 = unknown (differs from any other)
  std::optional<Hash> xet_hash;  // always set for remote files; local ones on demand
};

enum class SyncOpKind {
  kUpload,    // local file → remote path (upload direction only)
  kDownload,  // remote file → local path (download direction only)
  kDelete,    // remove the path at the destination
};

enum class SyncReason {
  kNew,             // not at the destination
  kSizeChanged,     // sizes differ
  kMtimeChanged,    // same size, mtimes differ
  kContentChanged,  // same size, Xet hashes differ (checksum mode)
  kNotInSource,     // destination file absent from the source (delete)
};

struct SyncOp {
  SyncOpKind kind = SyncOpKind::kUpload;
  std::string path;
  // Transfers: the source file's size and mtime at planning time. Deletes: the
  // destination file's size; mtime_ms is 0.
  uint64_t size = 0;
  int64_t mtime_ms = 0;
  // Downloads: the remote file to fetch (always set). Uploads: the local hash when checksum
  // mode computed it. Deletes: unset.
  std::optional<Hash> xet_hash;
  SyncReason reason = SyncReason::kNew;

  friend bool operator==(const SyncOp&, const SyncOp&) = default;
};

struct SyncPlan {
  SyncDirection direction = SyncDirection::kUpload;
  // What the plan was made for, as the caller names them (e.g. an absolute local directory
  // and an hf:// URL). Recorded in a plan file so that applying it elsewhere can be refused.
  std::string source;
  std::string destination;
  std::vector<SyncOp> ops;
};

struct SyncOptions {
  SyncDirection direction = SyncDirection::kUpload;
  bool delete_extraneous = false;  // --delete
  bool checksum = false;           // compare Xet hashes instead of mtimes
  PathFilter filter;
};

// What the planner decided not to do, for summaries.
struct SyncPlanCounts {
  uint64_t unchanged = 0;  // on both sides and equal by the rules above
  uint64_t excluded = 0;   // paths (of either listing) the filter excluded
  uint64_t kept = 0;       // destination-only files left in place (no delete_extraneous)
};

// Returns the Xet file hash of a local file (checksum mode). Called only for files present
// on both sides with equal sizes and no xet_hash of their own.
using SyncHasher = std::function<Result<Hash>(const SyncFile& file)>;

// Plans a sync of `source` onto `destination` (the listings in any order). The returned
// plan has `options.direction` and no source/destination names (the caller sets them).
// InvalidArgument when a listing names a path twice, or when checksum mode needs a hash that
// neither the entry nor `hasher` provides; the hasher's error otherwise. `counts` may be
// null.
Result<SyncPlan> PlanSync(std::vector<SyncFile> source, std::vector<SyncFile> destination,
                          const SyncOptions& options, const SyncHasher& hasher = {},
                          SyncPlanCounts* counts = nullptr);

// Stable names used in plan files and output: "upload"/"download"/"delete",
// "new"/"size-changed"/"mtime-changed"/"content-changed"/"not-in-source",
// "upload"/"download" for directions.
std::string_view SyncOpKindName(SyncOpKind kind);
std::string_view SyncReasonName(SyncReason reason);
std::string_view SyncDirectionName(SyncDirection direction);

}  // namespace xet
