// SqliteReadPool: a fixed set of read-only connections to one database, leased to one
// thread at a time. Under WAL, readers run concurrently with each other and with the
// writer; each connection keeps its own prepared-statement cache.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "common/result.h"
#include "store/sqlite/sqlite_db.h"

namespace xet {

class SqliteReadPool {
 public:
  class Lease {
   public:
    Lease(SqliteReadPool* pool, std::unique_ptr<SqliteDb> db) : pool_(pool), db_(std::move(db)) {}
    Lease(Lease&&) = default;
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() {
      if (db_) pool_->Return(std::move(db_));
    }
    SqliteDb& db() { return *db_; }

   private:
    SqliteReadPool* pool_;
    std::unique_ptr<SqliteDb> db_;
  };

  // `memory_map`: read the database file through mmap. Large records (a 100,000-term file
  // is a 4.4 MB blob) then come from the shared OS page cache instead of one read() per
  // page into each connection's small cache; but the first read transaction after any
  // commit unmaps the whole mapping (SQLite drops it when the database changed), which
  // costs small point lookups more than it saves them.
  static Result<std::unique_ptr<SqliteReadPool>> Open(const std::string& path, size_t size,
                                                      int busy_timeout_ms, bool memory_map);

  // Blocks until a connection is free.
  Lease Acquire();

 private:
  SqliteReadPool() = default;
  void Return(std::unique_ptr<SqliteDb> db);

  Mutex mu_;
  CondVar cv_;
  std::vector<std::unique_ptr<SqliteDb>> free_ GUARDED_BY(mu_);
};

}  // namespace xet
