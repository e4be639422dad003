// Conversions between index records and SQLite values, shared by the SqliteIndex sources:
// hashes are 32-byte blobs, sizes are non-negative INTEGERs (SQLite has no unsigned type).
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>

#include "common/result.h"
#include "format/hash.h"
#include "store/sqlite/sqlite_db.h"

namespace xet {

inline std::span<const uint8_t> HashBytes(const Hash& h) { return {h.data(), Hash::kSize}; }

// Column `col` as a hash; Corruption unless it is exactly 32 bytes. `what` names the value.
inline Result<Hash> HashColumn(SqliteStatement& stmt, int col, const char* what) {
  std::span<const uint8_t> bytes = stmt.ColumnBlob(col);
  if (bytes.size() != Hash::kSize) {
    return Status::Corruption(std::string("index ") + what + " of " + std::to_string(bytes.size()) +
                              " bytes, expected 32");
  }
  return Hash::FromBytes(bytes.data());
}

// An unsigned value as a SQLite INTEGER; InvalidArgument above INT64_MAX.
inline Result<int64_t> ToSqlInt(uint64_t v, const char* what) {
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Status::InvalidArgument(std::string(what) + " too large for the index");
  }
  return static_cast<int64_t>(v);
}

// A stored size; Corruption if negative.
inline Result<uint64_t> FromSqlSize(int64_t v, const char* what) {
  if (v < 0) return Status::Corruption(std::string("index ") + what + " is negative");
  return static_cast<uint64_t>(v);
}

// A size or count limit as a SQL LIMIT value (saturating).
inline int64_t SqlLimit(size_t limit) {
  return limit > static_cast<size_t>(std::numeric_limits<int64_t>::max())
             ? std::numeric_limits<int64_t>::max()
             : static_cast<int64_t>(limit);
}

}  // namespace xet
