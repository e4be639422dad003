// The Index contract suites (index_contract_test.cc, bucket_index_contract_test.cc): what an
// Index backend is to them, and the fixture that opens it.
//
// A backend joins both suites with one file of its own, e.g. tests/store/sqlite/
// sqlite_index_contract_test.cc:
//   INSTANTIATE_TEST_SUITE_P(Sqlite, IndexContract, ::testing::Values(backend), IndexBackendName);
//   INSTANTIATE_TEST_SUITE_P(Sqlite, BucketIndexContract, ::testing::Values(backend),
//                            IndexBackendName);
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <utility>

#include "common/result.h"
#include "store/index.h"
#include "support/temp_dir.h"

namespace xet::testing {

// How the suites open one backend's Index.
struct IndexBackend {
  std::string name;  // the test-name suffix: letters, digits and '_'
  // Opens the index kept under `scratch_dir`, a fresh empty directory of the test (a backend
  // keeping no files there derives its scratch database's name from it). Opening the same
  // directory again, after the previous Index was destroyed, sees everything it committed.
  std::function<Result<std::unique_ptr<Index>>(const std::string& scratch_dir)> open;
};

// Failure messages name the backend ("where GetParam() = Sqlite").
inline void PrintTo(const IndexBackend& backend, std::ostream* os) { *os << backend.name; }

inline std::string IndexBackendName(const ::testing::TestParamInfo<IndexBackend>& info) {
  return info.param.name;
}

// One backend's Index in a fresh scratch directory, reopened on demand. The contract suites
// open the parameter's backend; a backend's own tests open their backend directly.
class IndexFixture : public ::testing::Test {
 protected:
  void Open(IndexBackend backend) {
    backend_ = std::move(backend);
    Reopen();
  }
  // Closes the index and opens it again on the same storage.
  void Reopen() {
    index_.reset();
    auto index = backend_.open(scratch_.path());
    ASSERT_TRUE(index.ok()) << backend_.name << ": " << index.status().ToString();
    index_ = std::move(index).value();
  }

  TempDir scratch_{"xet-index"};
  std::unique_ptr<Index> index_;

 private:
  IndexBackend backend_;
};

// The suite of index_contract_test.cc: xorbs, files, shards, dedup and tokens.
class IndexContract : public IndexFixture, public ::testing::WithParamInterface<IndexBackend> {
 protected:
  void SetUp() override { Open(GetParam()); }
};

}  // namespace xet::testing
