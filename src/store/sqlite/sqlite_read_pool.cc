#include "store/sqlite/sqlite_read_pool.h"

namespace xet {
namespace {

constexpr const char* kMappedReaderPragmas =
    "PRAGMA mmap_size=1073741824; PRAGMA cache_size=-8192;";
constexpr const char* kUnmappedReaderPragmas = "PRAGMA mmap_size=0; PRAGMA cache_size=-8192;";

}  // namespace

Result<std::unique_ptr<SqliteReadPool>> SqliteReadPool::Open(const std::string& path, size_t size,
                                                             int busy_timeout_ms, bool memory_map) {
  std::unique_ptr<SqliteReadPool> pool(new SqliteReadPool());
  for (size_t i = 0; i < size; ++i) {
    XET_ASSIGN_OR_RETURN(auto db, SqliteDb::Open(path, /*read_only=*/true, busy_timeout_ms));
    XET_RETURN_IF_ERROR(db->Exec(memory_map ? kMappedReaderPragmas : kUnmappedReaderPragmas));
    MutexLock lock(pool->mu_);  // uncontended: the pool is not shared yet
    pool->free_.push_back(std::move(db));
  }
  return pool;
}

SqliteReadPool::Lease SqliteReadPool::Acquire() {
  MutexLock lock(mu_);
  while (free_.empty()) cv_.Wait(mu_);
  std::unique_ptr<SqliteDb> db = std::move(free_.back());
  free_.pop_back();
  return Lease(this, std::move(db));
}

void SqliteReadPool::Return(std::unique_ptr<SqliteDb> db) {
  {
    MutexLock lock(mu_);
    free_.push_back(std::move(db));
  }
  cv_.NotifyOne();
}

}  // namespace xet
