// Runs commits in the background: files closed after a write are queued here, and one
// thread takes everything queued at once and hands it to `commit` as one group (one
// upload session and one batch), so many small files written in a row cost a few requests,
// not a few per file. A group is started `gather_ms` after its first file was queued (or at
// once when `max_group` files wait, or a Drain asks), so files closed in quick succession
// share it; a group takes at most `max_group` files (the rest form the next one). A commit that
// fails is retried with a growing delay (1 s to 30 s) until it succeeds or the file stops needing
// it.
//
// Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"
#include "mount/inode_table.h"

namespace xet {

class CommitQueue {
 public:
  // Commits a group; returns the inodes whose commit failed (to retry).
  using CommitFn = std::function<std::vector<Ino>(const std::vector<Ino>&)>;

  explicit CommitQueue(CommitFn commit, int64_t gather_ms = 0, size_t max_group = 4096);
  ~CommitQueue();  // stops the thread after the commits queued so far are done (or failed)
  CommitQueue(const CommitQueue&) = delete;
  CommitQueue& operator=(const CommitQueue&) = delete;

  // Queues `ino` for the next group.
  void Enqueue(Ino ino);
  // Starts the group being gathered now (someone waits for it).
  void Expedite();
  // Waits until nothing is queued or running (retries waiting for their delay count as
  // queued: they are run now). Returns false when some commits failed in that run.
  bool Drain();

 private:
  void Run();

  CommitFn commit_;
  const int64_t gather_ms_;
  const size_t max_group_;
  Mutex mu_;
  CondVar cv_;
  std::set<Ino> queued_ GUARDED_BY(mu_);
  int64_t first_queued_ms_ GUARDED_BY(mu_) = 0;  // when queued_ last became non-empty
  std::set<Ino> retry_ GUARDED_BY(mu_);
  int64_t retry_at_ms_ GUARDED_BY(mu_) = 0;
  int64_t retry_delay_ms_ GUARDED_BY(mu_) = 0;
  bool running_ GUARDED_BY(mu_) = false;
  bool drain_now_ GUARDED_BY(mu_) = false;
  bool expedite_ GUARDED_BY(mu_) = false;
  bool last_failed_ GUARDED_BY(mu_) = false;
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace xet
