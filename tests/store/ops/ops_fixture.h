// The fixture of the operator tools' tests (store/ops/): one Index backend (the parameter:
// SQLite or a real PostgreSQL) and a real local object store, both in the test's scratch
// directory.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "store/index_contract.h"
#include "store/local/local_object_store.h"

namespace xet::testing {

class StoreOpsTest : public IndexFixture, public ::testing::WithParamInterface<IndexBackend> {
 protected:
  void SetUp() override {
    Open(GetParam());
    auto objects = LocalObjectStore::Open(scratch_.path() + "/objects");
    ASSERT_TRUE(objects.ok()) << objects.status().ToString();
    objects_ = std::move(objects).value();
  }

  std::unique_ptr<LocalObjectStore> objects_;
};

}  // namespace xet::testing
