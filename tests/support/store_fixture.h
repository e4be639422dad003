// StoreFixture: a real LocalObjectStore, SQLite index and XorbRecordCache in a fresh
// temporary directory, for tests of server-side code that reads and writes stored xorbs.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "server/cache/xorb_record_cache.h"
#include "server/cas/xorb_ingest.h"
#include "store/index.h"
#include "store/local/local_object_store.h"
#include "support/temp_dir.h"
#include "support/xet_fixtures.h"

namespace xet::testing {

class StoreFixture : public ::testing::Test {
 protected:
  // `dir_prefix` names the temporary directory (for a test's leftovers, if any).
  explicit StoreFixture(const std::string& dir_prefix) : dir_(dir_prefix) {}

  void SetUp() override {
    auto objects = LocalObjectStore::Open(dir_.path() + "/objects");
    ASSERT_TRUE(objects.ok()) << objects.status().ToString();
    objects_ = std::move(objects).value();
    auto index = OpenSqliteIndex(dir_.path() + "/index.db");
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    index_ = std::move(index).value();
    cache_ = std::make_unique<XorbRecordCache>(*index_, 1 << 20);
  }

  // Ingests every xorb of `upload` for `scope` (a test failure for any that is refused).
  void StoreXorbs(const UploadArtifacts& upload, const Scope& scope) {
    for (const SerializedXorb& x : upload.xorbs) {
      auto r = IngestXorb(x.hash, x.bytes, scope, *index_, *objects_);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
    }
  }

  TempDir dir_;
  std::unique_ptr<LocalObjectStore> objects_;
  std::unique_ptr<Index> index_;
  std::unique_ptr<XorbRecordCache> cache_;
};

}  // namespace xet::testing
