#include "store/postgres/pg_pool.h"

#include <algorithm>
#include <random>
#include <thread>

namespace xet {
namespace {

const char* BeginSql(PgIsolation isolation, bool read_only) {
  switch (isolation) {
    case PgIsolation::kReadCommitted:
      return read_only ? "BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY"
                       : "BEGIN ISOLATION LEVEL READ COMMITTED";
    case PgIsolation::kRepeatableRead:
      return read_only ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
                       : "BEGIN ISOLATION LEVEL REPEATABLE READ";
    case PgIsolation::kSerializable:
      return read_only ? "BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY"
                       : "BEGIN ISOLATION LEVEL SERIALIZABLE";
  }
  return "BEGIN";
}

// Whether a failed attempt may run again: the transaction did not commit and a fresh one
// can succeed.
bool Retryable(const PgConnection& conn, const Status& st) {
  if (st.code() != Status::Code::kUnavailable) return false;
  return conn.sqlstate() == kPgSerializationFailure || conn.sqlstate() == kPgDeadlockDetected ||
         !conn.healthy();
}

}  // namespace

PgLease::~PgLease() {
  if (pool_ != nullptr && conn_ != nullptr) pool_->Release(std::move(conn_));
}

Result<std::unique_ptr<PgPool>> PgPool::Open(std::string conninfo, size_t max_connections) {
  std::unique_ptr<PgPool> pool(
      new PgPool(std::move(conninfo), std::max<size_t>(1, max_connections)));
  XET_ASSIGN_OR_RETURN(auto first, PgConnection::Connect(pool->conninfo_));
  MutexLock lock(pool->mu_);
  pool->idle_.push_back(std::move(first));
  pool->open_ = 1;
  return pool;
}

PgPool::~PgPool() {
  MutexLock lock(mu_);
  idle_.clear();
}

Result<PgLease> PgPool::Acquire() {
  {
    MutexLock lock(mu_);
    while (idle_.empty() && open_ >= max_connections_) cv_.Wait(mu_);
    if (!idle_.empty()) {
      std::unique_ptr<PgConnection> conn = std::move(idle_.back());
      idle_.pop_back();
      return PgLease(this, std::move(conn));
    }
    ++open_;  // this slot is ours while we connect
  }
  auto conn = PgConnection::Connect(conninfo_);
  if (!conn.ok()) {
    MutexLock lock(mu_);
    --open_;
    cv_.NotifyOne();
    return conn.status();
  }
  return PgLease(this, std::move(conn).value());
}

void PgPool::Release(std::unique_ptr<PgConnection> conn) {
  const bool keep = conn->healthy();
  if (!keep) conn.reset();  // closed outside the lock
  MutexLock lock(mu_);
  if (keep) {
    idle_.push_back(std::move(conn));
  } else {
    --open_;
  }
  cv_.NotifyOne();
}

uint64_t PgPool::retries() const {
  MutexLock lock(mu_);
  return retries_;
}

void PgPool::Backoff(int attempt) {
  {
    MutexLock lock(mu_);
    ++retries_;
  }
  const auto base =
      std::min(policy_.max_backoff, policy_.first_backoff * (1 << std::min(attempt, 16)));
  thread_local std::minstd_rand rng(std::random_device{}());
  const auto jitter = std::chrono::microseconds(
      std::uniform_int_distribution<int64_t>(0, std::chrono::microseconds(base).count())(rng));
  std::this_thread::sleep_for(std::chrono::microseconds(base) / 2 + jitter);
}

Status PgPool::RunTransaction(PgIsolation isolation, bool read_only,
                              const std::function<Status(PgConnection&)>& body) {
  Status last;
  for (int attempt = 0; attempt < policy_.max_attempts; ++attempt) {
    if (attempt > 0) Backoff(attempt);
    auto lease = Acquire();
    if (!lease.ok()) {
      last = lease.status();
      if (last.code() == Status::Code::kUnavailable) continue;  // the server may be restarting
      return last;
    }
    PgConnection& conn = lease->conn();
    Status st = conn.ExecSimple(BeginSql(isolation, read_only));
    if (st.ok()) st = body(conn);
    if (!st.ok()) {
      const bool retry = Retryable(conn, st);  // before ROLLBACK resets the SQLSTATE
      (void)conn.ExecSimple("ROLLBACK");
      if (retry) {
        last = st;
        continue;
      }
      return st;
    }
    st = conn.ExecSimple("COMMIT");
    if (st.ok()) return st;
    // A serialization failure at COMMIT (SERIALIZABLE) rolled back: safe to retry. A lost
    // connection leaves the outcome unknown.
    if (conn.sqlstate() == kPgSerializationFailure || conn.sqlstate() == kPgDeadlockDetected) {
      last = st;
      continue;
    }
    (void)conn.ExecSimple("ROLLBACK");
    return st.code() == Status::Code::kUnavailable
               ? Status::Unavailable("postgres: connection lost during COMMIT; outcome unknown: " +
                                     st.message())
               : st;
  }
  return last.WithContext("postgres: gave up after " + std::to_string(policy_.max_attempts) +
                          " attempts");
}

Result<PgResult> PgPool::ExecOnce(const std::string& sql, const PgParams& params) {
  Status last;
  for (int attempt = 0; attempt < policy_.max_attempts; ++attempt) {
    if (attempt > 0) Backoff(attempt);
    auto lease = Acquire();
    if (!lease.ok()) {
      last = lease.status();
      if (last.code() == Status::Code::kUnavailable) continue;
      return last;
    }
    auto res = lease->conn().Exec(sql, params);
    if (res.ok()) return res;
    last = res.status();
    if (!Retryable(lease->conn(), last)) return last;
  }
  return last.WithContext("postgres: gave up after " + std::to_string(policy_.max_attempts) +
                          " attempts");
}

}  // namespace xet
