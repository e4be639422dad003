#include "store/sqlite/sqlite_group_commit.h"

#include <vector>

namespace xet {

struct SqliteGroupCommitter::Pending {
  Operation op;
  Status status;
  bool done = false;  // guarded by the committer's mu_ (not expressible on a nested struct)
  CondVar cv;         // signalled when done: only this caller wakes
};

SqliteGroupCommitter::SqliteGroupCommitter(std::unique_ptr<SqliteDb> db)
    : db_(std::move(db)), thread_([this] { Run(); }) {}

SqliteGroupCommitter::~SqliteGroupCommitter() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  queue_cv_.NotifyOne();
  thread_.join();
}

Status SqliteGroupCommitter::Submit(Operation op) {
  Pending pending;
  pending.op = std::move(op);
  MutexLock lock(mu_);
  if (stopping_) return Status::Internal("index is closing");
  queue_.push_back(&pending);
  const bool wake = queue_.size() == 1;
  if (wake) queue_cv_.NotifyOne();
  while (!pending.done) pending.cv.Wait(mu_);
  return pending.status;
}

SqliteGroupCommitter::Stats SqliteGroupCommitter::stats() const {
  MutexLock lock(mu_);
  return stats_;
}

void SqliteGroupCommitter::Run() {
  std::deque<Pending*> batch;
  while (true) {
    {
      MutexLock lock(mu_);
      while (!stopping_ && queue_.empty()) queue_cv_.Wait(mu_);
      if (queue_.empty()) return;  // stopping and drained
      while (!queue_.empty() && batch.size() < kMaxBatch) {
        batch.push_back(queue_.front());
        queue_.pop_front();
      }
    }
    const bool committed = CommitBatch(batch);
    {
      MutexLock lock(mu_);
      if (committed) {
        stats_.transactions++;
        stats_.operations += batch.size();
      }
      // Notified under the lock: once done is seen, a caller's Pending may be gone.
      for (Pending* p : batch) {
        p->done = true;
        p->cv.NotifyOne();
      }
    }
    batch.clear();
  }
}

bool SqliteGroupCommitter::CommitBatch(std::deque<Pending*>& batch) {
  SqliteDb& db = *db_;
  // Operations still to be committed; one that aborts the whole transaction is removed
  // (keeping its error) and the rest are retried in a fresh transaction.
  std::vector<Pending*> live(batch.begin(), batch.end());
  while (!live.empty()) {
    Status begin = db.Exec("BEGIN IMMEDIATE");
    if (!begin.ok()) {
      for (Pending* p : live) p->status = begin.WithContext("begin index transaction");
      return false;
    }
    bool aborted = false;
    for (size_t i = 0; i < live.size(); ++i) {
      Pending* p = live[i];
      Status st = db.Exec("SAVEPOINT op");
      if (st.ok()) st = p->op(db);
      if (st.ok()) {
        st = db.Exec("RELEASE op");
        p->status = st;
        if (st.ok()) continue;
      }
      p->status = st;
      if (db.InAutocommit()) {
        // SQLite rolled back the whole transaction: retry the others without this one.
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
        aborted = true;
        break;
      }
      Status undo = db.Exec("ROLLBACK TO op");
      if (undo.ok()) undo = db.Exec("RELEASE op");
      if (!undo.ok()) {
        (void)db.Exec("ROLLBACK");
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
        aborted = true;
        break;
      }
    }
    if (aborted) continue;
    Status commit = db.Exec("COMMIT");
    if (!commit.ok()) {
      if (!db.InAutocommit()) (void)db.Exec("ROLLBACK");
      for (Pending* p : live) {
        if (p->status.ok()) p->status = commit.WithContext("commit index transaction");
      }
      return false;
    }
    return true;
  }
  return false;
}

}  // namespace xet
