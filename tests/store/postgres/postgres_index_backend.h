// The PostgreSQL Index backend as the contract suites open it (tests/store/index_contract.h):
// one database per test on the test process's server (tests/support/postgres_test_server.h),
// named after the test's scratch directory, so reopening the same directory reopens the
// same database.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "store/index.h"
#include "store/index_contract.h"
#include "support/postgres_test_server.h"

namespace xet::testing {

// The scratch directory's name as a database name: "t_" + lowercase letters, digits, '_'.
inline std::string PostgresDbName(const std::string& scratch_dir) {
  std::string name = "t_";
  for (char c : std::filesystem::path(scratch_dir).filename().string()) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    const bool keep = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    name.push_back(keep ? c : '_');
  }
  return name;
}

// The URL of the scratch database of `scratch_dir`, created if missing; Unavailable when the
// server did not start (the server has already failed the test, saying why).
inline Result<std::string> PostgresScratchUrl(const std::string& scratch_dir) {
  PostgresTestServer& server = PostgresTestServer::Shared();
  if (!server.started()) return Status::Unavailable("the PostgreSQL test server did not start");
  const std::string db = PostgresDbName(scratch_dir);
  if (std::string error = server.CreateDatabase(db); !error.empty()) {
    return Status::IoError("create database " + db + ": " + error);
  }
  return server.Url(db);
}

inline IndexBackend PostgresIndexBackend() {
  return {"Postgres", [](const std::string& scratch_dir) -> Result<std::unique_ptr<Index>> {
            XET_ASSIGN_OR_RETURN(std::string url, PostgresScratchUrl(scratch_dir));
            return OpenPostgresIndex(url);
          }};
}

}  // namespace xet::testing
