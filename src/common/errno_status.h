// The Status for a failed system call, by its errno: a full disk or quota is told apart
// from every other I/O error, so callers (and, on the server, the HTTP answer) can say
// "no space left" instead of "internal error".
#pragma once

#include <string_view>

#include "common/status.h"

namespace xet {

// True for the errno values that mean "no space to store this": ENOSPC and EDQUOT.
bool IsNoSpaceErrno(int err);

// "<what>: <strerror(err)>" as InsufficientStorage when IsNoSpaceErrno(err), else as
// IoError. Does not read errno itself: pass it before anything can overwrite it.
Status StatusFromErrno(std::string_view what, int err);

}  // namespace xet
