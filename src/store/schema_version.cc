#include "store/schema_version.h"

#include <string>

namespace xet {

Status CheckSchemaVersion(int64_t stored, int64_t known) {
  if (stored >= 0 && stored <= known) return Status::Ok();
  return Status::Internal("index schema version " + std::to_string(stored) +
                          " is newer than this xetstore supports (" + std::to_string(known) + ")");
}

}  // namespace xet
