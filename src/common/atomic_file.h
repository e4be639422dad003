// Small durable files (secrets, tokens, config written by the server).
#pragma once

#include <sys/types.h>

#include <string>

#include "common/result.h"

namespace xet {

// Writes `data` to `path` crash-safely: a temporary file in the same directory with
// permissions `mode`, fsync, rename over `path`, fsync the directory. Readers see the old
// content or the new, never a mix. A full disk or quota is InsufficientStorage (and the
// temporary file is removed); other failures are IoError.
Status WriteFileAtomically(const std::string& path, const std::string& data, mode_t mode);

// The whole content of a (small) file; NotFound if absent.
Result<std::string> ReadSmallFile(const std::string& path, size_t max_bytes = 1 << 20);

}  // namespace xet
