// SqliteGroupCommitter: the single writer of a SQLite database, committing the operations
// of many concurrent callers in one transaction (group commit).
//
// Submit() enqueues an operation and blocks. The writer thread takes everything queued
// (up to kMaxBatch), opens one BEGIN IMMEDIATE transaction, runs each operation inside its
// own SAVEPOINT (an operation that fails is rolled back to its savepoint and gets its own
// error; the others go on), COMMITs once (one WAL fsync under synchronous=FULL for the whole
// group) and only then wakes each caller with its result. So a caller's OK means durable,
// an error means none of its writes are visible, and throughput scales with concurrency.
// If SQLite aborts the whole transaction (e.g. disk full), the batch is retried without the
// operation that caused it; if COMMIT itself fails, every operation of the group gets that
// error.
//
// Operations may run more than once (after such a retry): they must compute their results
// from the database state each time they run. The destructor drains the queue and joins the
// thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <thread>

#include "common/mutex.h"
#include "common/status.h"
#include "store/sqlite/sqlite_db.h"

namespace xet {

class SqliteGroupCommitter {
 public:
  using Operation = std::function<Status(SqliteDb&)>;
  static constexpr size_t kMaxBatch = 1024;

  explicit SqliteGroupCommitter(std::unique_ptr<SqliteDb> db);
  SqliteGroupCommitter(const SqliteGroupCommitter&) = delete;
  SqliteGroupCommitter& operator=(const SqliteGroupCommitter&) = delete;
  ~SqliteGroupCommitter();

  // Runs `op` inside a committed transaction and returns its status once durable.
  Status Submit(Operation op);

  // Counters for tests and metrics: committed transactions and operations run in them.
  struct Stats {
    uint64_t transactions = 0;
    uint64_t operations = 0;
  };
  Stats stats() const;

 private:
  struct Pending;
  void Run();
  // Returns whether a transaction committed.
  bool CommitBatch(std::deque<Pending*>& batch);

  std::unique_ptr<SqliteDb> db_;  // used by the writer thread only

  mutable Mutex mu_;
  Stats stats_ GUARDED_BY(mu_);
  CondVar queue_cv_;  // writer waits for work (callers wait on their Pending)
  std::deque<Pending*> queue_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;  // started last
};

}  // namespace xet
