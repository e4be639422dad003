// Small durable files (secrets, tokens, config written by the server).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace xet {

// Writes `data` to `path` crash-safely: a temporary file in the same directory with
// permissions `mode`, fsync, rename over `path`, fsync the directory. Readers see the old
// content or the new, never a mix. A full disk or quota is InsufficientStorage (and the
// temporary file is removed); other failures are IoError.
// The temporary is "<dir>/.<name>.tmp-<pid>"; a process killed mid-write leaves it behind
// (see RemoveStaleAtomicWriteTemporaries).
Status WriteFileAtomically(const std::string& path, const std::string& data, mode_t mode);

// When `file_name` (a name without directory) is the temporary of a WriteFileAtomically
// call, the name of the file that call was writing ("name" for ".name.tmp-123"); otherwise
// nullopt.
std::optional<std::string> AtomicWriteTarget(std::string_view file_name);

// Removes the temporaries that WriteFileAtomically(path, ...) calls of processes no longer
// running left next to `path` (a process killed mid-write); those of running processes,
// this one included, are kept. Best effort: errors are ignored.
void RemoveStaleAtomicWriteTemporaries(const std::string& path);

// The whole content of a (small) file; NotFound if absent.
Result<std::string> ReadSmallFile(const std::string& path, size_t max_bytes = 1 << 20);

}  // namespace xet
