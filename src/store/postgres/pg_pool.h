// PgPool: a bounded pool of PostgreSQL connections, and the transaction runner the index
// uses on it.
//
// - At most `max_connections` connections exist; Acquire() waits while all are leased.
// - A lease (PgLease, RAII) returns its connection when destroyed, unless the connection is
//   no longer healthy (lost, or left inside a transaction): then it is closed and its slot
//   freed, so the next Acquire() connects afresh. A server restart or a terminated backend
//   costs the callers that held those connections one failed attempt each, which
//   RunTransaction retries.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "common/result.h"
#include "store/postgres/pg_connection.h"

namespace xet {

class PgPool;

class PgLease {
 public:
  PgLease(PgLease&& other) noexcept : pool_(other.pool_), conn_(std::move(other.conn_)) {
    other.pool_ = nullptr;
  }
  PgLease(const PgLease&) = delete;
  PgLease& operator=(const PgLease&) = delete;
  PgLease& operator=(PgLease&&) = delete;
  ~PgLease();

  PgConnection& conn() { return *conn_; }

 private:
  friend class PgPool;
  PgLease(PgPool* pool, std::unique_ptr<PgConnection> conn) : pool_(pool), conn_(std::move(conn)) {}
  PgPool* pool_;
  std::unique_ptr<PgConnection> conn_;
};

// How RunTransaction isolates and retries.
enum class PgIsolation { kReadCommitted, kRepeatableRead, kSerializable };

struct PgRetryPolicy {
  int max_attempts = 8;
  std::chrono::milliseconds first_backoff{2};  // doubled per attempt, with jitter
  std::chrono::milliseconds max_backoff{200};
};

class PgPool {
 public:
  // Opens one connection now (so a wrong URL or a server that is down fails at open).
  static Result<std::unique_ptr<PgPool>> Open(std::string conninfo, size_t max_connections);
  ~PgPool();

  Result<PgLease> Acquire();

  // Runs `body` in one transaction at `isolation` (read_only: a READ ONLY transaction) and
  // commits. A serialization failure (40001), a deadlock (40P01) or a connection lost before
  // COMMIT was sent rolls back and runs `body` again, on a fresh lease, up to
  // policy().max_attempts times with exponential backoff: `body` must start from scratch
  // each time. A connection lost during COMMIT is not retried (the outcome is unknown):
  // Unavailable. Any other failure of `body` rolls back and is returned.
  Status RunTransaction(PgIsolation isolation, bool read_only,
                        const std::function<Status(PgConnection&)>& body);
  // One statement outside an explicit transaction, retried like RunTransaction when the
  // connection was lost (for reads and idempotent writes).
  Result<PgResult> ExecOnce(const std::string& sql, const PgParams& params);

  PgRetryPolicy& policy() { return policy_; }
  size_t max_connections() const { return max_connections_; }
  // Retries taken since open (serialization failures, deadlocks, lost connections).
  uint64_t retries() const;

 private:
  friend class PgLease;
  PgPool(std::string conninfo, size_t max_connections)
      : conninfo_(std::move(conninfo)), max_connections_(max_connections) {}
  void Release(std::unique_ptr<PgConnection> conn);
  void Backoff(int attempt);

  const std::string conninfo_;
  const size_t max_connections_;
  PgRetryPolicy policy_;  // set before the pool is shared
  mutable Mutex mu_;
  CondVar cv_;
  std::vector<std::unique_ptr<PgConnection>> idle_ GUARDED_BY(mu_);
  size_t open_ GUARDED_BY(mu_) = 0;  // idle + leased + being connected
  uint64_t retries_ GUARDED_BY(mu_) = 0;
};

}  // namespace xet
