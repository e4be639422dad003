// CachedObjectStore over a LocalObjectStore runs the ObjectStore contract suite
// (tests/store/object_store_contract.h): the cache must keep every promise of the store it
// fronts.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "store/cache/cached_object_store.h"
#include "store/object_store.h"
#include "store/object_store_contract.h"

namespace xet::testing {
namespace {

std::vector<std::string> TempFilesUnder(const std::string& root) {
  std::vector<std::string> found;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (e.path().filename().string().starts_with(".tmp-")) found.push_back(e.path().string());
  }
  return found;
}

ObjectStoreBackend CachedLocalBackend() {
  return {"CachedLocal",
          [](const std::string& scratch_dir) -> Result<std::unique_ptr<ObjectStore>> {
            XET_ASSIGN_OR_RETURN(auto remote, OpenLocalObjectStore(scratch_dir + "/remote"));
            ObjectCacheOptions options;
            options.dir = scratch_dir + "/cache";
            options.capacity_bytes = 64 << 20;
            return OpenCachedObjectStore(std::move(remote), options);
          },
          /*opens_files=*/true, TempFilesUnder};
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(CachedLocal, ObjectStoreContract, ::testing::Values(CachedLocalBackend()),
                         ObjectStoreBackendName);

}  // namespace xet::testing
