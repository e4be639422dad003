// LocalObjectStore runs the ObjectStore contract suite (tests/store/object_store_contract.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "store/object_store.h"
#include "store/object_store_contract.h"

namespace xet::testing {
namespace {

// Temporary files (".tmp-<name>-<nonce>", see local_object_store.h) anywhere under `root`.
std::vector<std::string> LocalTempFiles(const std::string& root) {
  std::vector<std::string> found;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (e.path().filename().string().starts_with(".tmp-")) found.push_back(e.path().string());
  }
  return found;
}

ObjectStoreBackend LocalObjectStoreBackend() {
  return {"Local", [](const std::string& scratch_dir) { return OpenLocalObjectStore(scratch_dir); },
          /*opens_files=*/true, LocalTempFiles};
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Local, ObjectStoreContract, ::testing::Values(LocalObjectStoreBackend()),
                         ObjectStoreBackendName);

}  // namespace xet::testing
