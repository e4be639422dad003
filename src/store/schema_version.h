// The schema-version rule every Index backend applies at open: a database records how many
// of the backend's append-only migrations it has had; a binary applies the ones it lacks and
// refuses a database migrated by a newer binary.
#pragma once

#include <cstdint>

#include "common/status.h"

namespace xet {

// OK when a database at schema version `stored` can be brought up to `known` (the number of
// migrations this binary has); Internal ("index schema version N is newer than this
// xetstore supports (K)") when it is newer or negative.
Status CheckSchemaVersion(int64_t stored, int64_t known);

}  // namespace xet
