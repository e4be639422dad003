// Reading a whole file in tests: logs, command output, downloaded copies.
#pragma once

#include <filesystem>
#include <string>

namespace xet::testing {

// The file's bytes as they are when read, in bulk (a test may compare files of hundreds of
// MiB, which a character-by-character read makes take seconds, minutes under the
// sanitizers). Empty if the file cannot be opened: callers that must tell the two apart
// check existence first. A file still being written (a live process's log) is read up to
// its end at the time.
std::string ReadWholeFile(const std::filesystem::path& path);

}  // namespace xet::testing
