// SqliteIndex runs the Index contract suites (tests/store/index_contract.h).
#include <gtest/gtest.h>

#include "store/bucket_index_contract.h"
#include "store/index_contract.h"
#include "store/sqlite/sqlite_index_backend.h"

namespace xet::testing {

INSTANTIATE_TEST_SUITE_P(Sqlite, IndexContract, ::testing::Values(SqliteIndexBackend()),
                         IndexBackendName);
INSTANTIATE_TEST_SUITE_P(Sqlite, BucketIndexContract, ::testing::Values(SqliteIndexBackend()),
                         IndexBackendName);
INSTANTIATE_TEST_SUITE_P(Sqlite, BucketPosixContract, ::testing::Values(SqliteIndexBackend()),
                         IndexBackendName);

}  // namespace xet::testing
