// ParseMigrateState (store/ops/migrate_state.h) on arbitrary bytes: never crashes, and a
// state it accepts survives FormatMigrateState and a second parse unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "store/ops/migrate_state.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto state = xet::ParseMigrateState(text);
  if (!state.ok()) return 0;
  auto again = xet::ParseMigrateState(xet::FormatMigrateState(*state));
  if (!again.ok()) std::abort();
  // Strings with invalid UTF-8 are written with replacement characters: only the counters
  // must survive unchanged then.
  if (again->checkpoint != state->checkpoint) std::abort();
  return 0;
}
