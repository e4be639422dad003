// PostgresIndex runs the Index contract suites (tests/store/index_contract.h) against a real
// PostgreSQL server started by the tests (tests/support/postgres_test_server.h).
#include <gtest/gtest.h>

#include "store/bucket_index_contract.h"
#include "store/index_contract.h"
#include "store/postgres/postgres_index_backend.h"

namespace xet::testing {

INSTANTIATE_TEST_SUITE_P(Postgres, IndexContract, ::testing::Values(PostgresIndexBackend()),
                         IndexBackendName);
INSTANTIATE_TEST_SUITE_P(Postgres, BucketIndexContract, ::testing::Values(PostgresIndexBackend()),
                         IndexBackendName);
INSTANTIATE_TEST_SUITE_P(Postgres, BucketPosixContract, ::testing::Values(PostgresIndexBackend()),
                         IndexBackendName);

}  // namespace xet::testing
