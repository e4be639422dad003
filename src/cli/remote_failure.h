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
inline constexpr int kExitDiskFull = 6;       // no space left on the local or the server's disk
inline constexpr int kExitInterrupted = 130;  // SIGINT/SIGTERM (128 + SIGINT, as shells do)

// The exit code for a failed `status` (by its code; InsufficientStorage, local or the
// server's 507, and an I/O error caused by a full disk are kExitDiskFull).
int ExitCodeFor(const Status& status);

// Prints `status` as a one-line error with a hint fitting its class (`endpoint` is named
// when the server could not be reached) and returns ExitCodeFor(status).
int ReportRemoteFailure(const Status& status, std::string_view endpoint);

// Prints a failure of local work (reading or writing local files) as a one-line error,
// without the server hints; returns ExitCodeFor(status).
int ReportLocalFailure(const Status& status);

// True when `status` says a disk or quota is full: InsufficientStorage, or an I/O error
// whose message holds the system's text for ENOSPC or EDQUOT.
bool IsDiskFull(const Status& status);

// True when `status` is the server's answer that its own disk is full (HTTP 507, which
// StatusFromResponse turns into InsufficientStorage with a message ending "(HTTP 507)").
bool IsServerDiskFull(const Status& status);
// Of those, the ones where the server's disk failed a write (an I/O error, not a full
// disk): the server's 507 message names "I/O error on the data disk".
bool IsServerDiskFailure(const Status& status);

}  // namespace xet::cli
