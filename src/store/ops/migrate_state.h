// The state file of `xetstore migrate`: which migration it belongs to (the source's and the
// destination's stores, as the command describes them) and the checkpoint reached. One JSON
// object: {"from": S, "to": S, "xorbs_after": N, "files_after": N}.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "store/ops/deployment_migrator.h"

namespace xet {

struct MigrateState {
  std::string from;
  std::string to;
  MigrateCheckpoint checkpoint;
  friend bool operator==(const MigrateState&, const MigrateState&) = default;
};

// The state in `text`. InvalidArgument ("not a migrate state file: ...") unless `text` is
// exactly such an object: both strings, both counters integers in 0..INT64_MAX. Unknown
// fields are ignored. Refuses text over 64 KiB before parsing it.
Result<MigrateState> ParseMigrateState(std::string_view text);

// `state` as the text ParseMigrateState reads back (one line, newline-terminated).
std::string FormatMigrateState(const MigrateState& state);

}  // namespace xet
