// The ObjectStore contract suite (object_store_contract_test.cc): what an ObjectStore backend
// is to it, and the fixture that opens it.
//
// A backend joins the suite with one file of its own, e.g. tests/store/local/
// local_object_store_contract_test.cc:
//   INSTANTIATE_TEST_SUITE_P(Local, ObjectStoreContract, ::testing::Values(backend),
//                            ObjectStoreBackendName);
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/object_store.h"
#include "support/temp_dir.h"

namespace xet::testing {

// How the suite opens one backend's ObjectStore.
struct ObjectStoreBackend {
  std::string name;  // the test-name suffix: letters, digits and '_'
  // Opens the store kept under `scratch_dir`, a fresh empty directory of the test (a backend
  // keeping no files there derives its scratch bucket's name from it).
  std::function<Result<std::unique_ptr<ObjectStore>>(const std::string& scratch_dir)> open;
  // Whether OpenFile opens objects (a store of local files) or is Unimplemented.
  bool opens_files = false;
  // What Puts that returned left in the store's storage under `scratch_dir` besides the
  // objects (temporary files, unfinished uploads), by name: the suite expects none.
  std::function<std::vector<std::string>(const std::string& scratch_dir)> leftovers;
};

// Failure messages name the backend ("where GetParam() = Local").
inline void PrintTo(const ObjectStoreBackend& backend, std::ostream* os) { *os << backend.name; }

inline std::string ObjectStoreBackendName(
    const ::testing::TestParamInfo<ObjectStoreBackend>& info) {
  return info.param.name;
}

// The suite of object_store_contract_test.cc: one backend's store in a fresh scratch
// directory.
class ObjectStoreContract : public ::testing::TestWithParam<ObjectStoreBackend> {
 protected:
  void SetUp() override {
    auto store = GetParam().open(scratch_.path());
    ASSERT_TRUE(store.ok()) << GetParam().name << ": " << store.status().ToString();
    store_ = std::move(store).value();
  }
  std::vector<std::string> Leftovers() const { return GetParam().leftovers(scratch_.path()); }

  TempDir scratch_{"xet-objstore"};
  std::unique_ptr<ObjectStore> store_;
};

namespace object_store_test {

// n deterministic bytes; different seeds give different bytes.
inline std::vector<uint8_t> Bytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
  return v;
}

}  // namespace object_store_test
}  // namespace xet::testing
