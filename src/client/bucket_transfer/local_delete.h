// Removing local files, as a download into a local tree does for the files the bucket no
// longer has (`sync --delete`).
#pragma once

#include <span>
#include <string>

#include "common/status.h"

namespace xet {

// Removes the local files `paths` in order; a file already gone is fine, and a symbolic
// link is removed itself, not what it points to. Refuses (InvalidArgument) to remove a
// directory; stops at the first failure (IoError with the system's reason), leaving the
// paths after it in place.
Status DeleteLocalFiles(std::span<const std::string> paths);

}  // namespace xet
