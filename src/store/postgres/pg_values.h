// Conversions between index values and PostgreSQL BIGINTs, shared by the PostgresIndex
// sources (PostgreSQL has no unsigned type).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/result.h"

namespace xet {

// An unsigned value as a BIGINT; InvalidArgument above INT64_MAX. `what` names the value.
inline Result<int64_t> ToPgInt(uint64_t v, const char* what) {
  if (v > static_cast<uint64_t>(INT64_MAX)) {
    return Status::InvalidArgument(std::string(what) + " too large for the index");
  }
  return static_cast<int64_t>(v);
}

// A size or count limit as a SQL LIMIT value (saturating).
inline int64_t PgLimit(size_t limit) {
  return limit > static_cast<size_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(limit);
}

}  // namespace xet
