// The SQLite Index backend as the contract suites open it (tests/store/index_contract.h).
#pragma once

#include <memory>
#include <string>

#include "store/index.h"
#include "store/index_contract.h"

namespace xet::testing {

// Where SqliteIndexBackend keeps the database in a test's scratch directory.
inline std::string SqliteIndexPath(const std::string& scratch_dir) {
  return scratch_dir + "/index.db";
}

inline IndexBackend SqliteIndexBackend() {
  return {"Sqlite", [](const std::string& scratch_dir) {
            return OpenSqliteIndex(SqliteIndexPath(scratch_dir));
          }};
}

}  // namespace xet::testing
