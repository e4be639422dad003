// How a client command reports a failed operation: one line on stderr naming what failed,
// a hint line saying what to do about it, and an exit code a script can test.
#pragma once

#include <string_view>

#include "cli/output.h"
#include "common/status.h"

namespace xet::cli {

// Exit codes of the client commands (besides output.h's 0 ok, 1 failure, 2 usage, which
// also covers a malformed name or hf:// path).
inline constexpr int kExitNotFound = 3;       // unknown bucket or path
inline constexpr int kExitPermission = 4;     // no or bad token (401), insufficient scope (403)
inline constexpr int kExitUnavailable = 5;    // server unreachable or failing, after retries
inline constexpr int kExitDiskFull = 6;       // no space left on the local disk
inline constexpr int kExitInterrupted = 130;  // SIGINT/SIGTERM (128 + SIGINT, as shells do)

// The exit code for a failed `status` (by its code; an I/O error caused by a full disk
// is kExitDiskFull).
int ExitCodeFor(const Status& status);

// Prints `status` as a one-line error with a hint fitting its class (`endpoint` is named
// when the server could not be reached) and returns ExitCodeFor(status).
int ReportRemoteFailure(const Status& status, std::string_view endpoint);

// Prints a failure of local work (reading or writing local files) as a one-line error,
// without the server hints; returns ExitCodeFor(status).
int ReportLocalFailure(const Status& status);

// True when `status` is an I/O error caused by a full disk or exhausted quota (its message
// ends in the system's text for ENOSPC or EDQUOT).
bool IsDiskFull(const Status& status);

}  // namespace xet::cli
