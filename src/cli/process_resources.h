// Process-wide resource settings `xetstore serve` makes once at start, before any thread.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/result.h"

namespace xet::cli {

// Raises the soft RLIMIT_NOFILE to the hard limit, so thousands of sockets fit. Returns the
// soft limit in force afterwards; IoError if it cannot be read or raised.
Result<uint64_t> RaiseOpenFileLimit();

// Makes the C allocator serve every allocation of at least `bytes` from its own mapping,
// released to the system when freed, and stops glibc from raising that threshold after such
// frees (its default dynamic threshold grows to 32 MiB, after which large request bodies
// land in the heap and stay in the process's RSS once freed). No-op without glibc.
void FixMmapThreshold(size_t bytes);

}  // namespace xet::cli
