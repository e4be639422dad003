// The plan file of `xetstore sync --plan FILE` / `--apply FILE`: a SyncPlan as JSON lines.
//
// Line 1, the header:
//   {"type":"xetstore-sync-plan","version":1,"direction":"upload"|"download",
//    "source":"...","destination":"..."}
// Then one line per operation, in plan order:
//   {"op":"upload","path":"a/b.bin","size":123,"mtime":1700000000123,"reason":"new"}
//   {"op":"download","path":"c.txt","size":5,"mtime":1700000000000,
//    "xetHash":"<64 hex>","reason":"size-changed"}
//   {"op":"delete","path":"old.log","size":9,"reason":"not-in-source"}
// "xetHash" is required on downloads, optional on uploads, absent on deletes; "mtime" is
// absent on deletes. Names of ops, reasons and directions are those of sync_plan.h.
//
// A plan file is untrusted input (it may have been edited, or come from someone else), so
// parsing is strict and refuses the whole file, with "plan line N: <why>", on: invalid JSON,
// a line that is not an object, a missing header or wrong version, an unknown or missing
// key, a value of the wrong type or out of range, an unknown op or reason, an op that does
// not fit the direction (a download in an upload plan), a path that is not a valid bucket
// path (protocol/bucket_path.h: absolute, "..", ".", "//", '\\', NUL or control characters,
// not UTF-8, longer than 1024 bytes) and a path named by two ops. Empty lines are ignored.
#pragma once

#include <string>
#include <string_view>

#include "client/sync/sync_plan.h"
#include "common/result.h"

namespace xet {

inline constexpr int kSyncPlanVersion = 1;

// The whole file: the header line then one line per op, each ending in '\n'.
std::string SyncPlanToJsonLines(const SyncPlan& plan);

// Parses a plan file's contents; the result re-serializes to an equivalent file.
Result<SyncPlan> SyncPlanFromJsonLines(std::string_view text);

}  // namespace xet
