#include "mount/commit_queue.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace xet {

namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr int64_t kFirstRetryMs = 1000;
constexpr int64_t kMaxRetryMs = 30'000;

}  // namespace

CommitQueue::CommitQueue(CommitFn commit, int64_t gather_ms, size_t max_group)
    : commit_(std::move(commit)), gather_ms_(gather_ms), max_group_(max_group) {
  thread_ = std::thread([this] { Run(); });
}

CommitQueue::~CommitQueue() {
  Drain();
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  thread_.join();
}

void CommitQueue::Enqueue(Ino ino) {
  {
    MutexLock lock(mu_);
    if (queued_.empty()) first_queued_ms_ = NowMs();
    queued_.insert(ino);
  }
  cv_.NotifyAll();
}

void CommitQueue::Expedite() {
  {
    MutexLock lock(mu_);
    expedite_ = true;
  }
  cv_.NotifyAll();
}

bool CommitQueue::Drain() {
  MutexLock lock(mu_);
  drain_now_ = true;
  last_failed_ = false;
  cv_.NotifyAll();
  while (running_ || !queued_.empty() || (!retry_.empty() && drain_now_)) cv_.Wait(mu_);
  drain_now_ = false;
  return !last_failed_ && retry_.empty();
}

void CommitQueue::Run() {
  MutexLock lock(mu_);
  while (true) {
    const bool retry_due = !retry_.empty() && (drain_now_ || NowMs() >= retry_at_ms_);
    if (queued_.empty() && !retry_due) {
      if (stop_) return;
      if (!retry_.empty()) {
        cv_.WaitFor(mu_, std::chrono::milliseconds(std::max<int64_t>(1, retry_at_ms_ - NowMs())));
      } else {
        if (drain_now_) drain_now_ = false;
        cv_.NotifyAll();
        cv_.Wait(mu_);
      }
      continue;
    }
    // Let a group fill while files keep arriving.
    const int64_t start_at = first_queued_ms_ + gather_ms_;
    if (!queued_.empty() && !retry_due && !drain_now_ && !expedite_ && !stop_ &&
        queued_.size() < max_group_ && NowMs() < start_at) {
      cv_.WaitFor(mu_, std::chrono::milliseconds(std::max<int64_t>(1, start_at - NowMs())));
      continue;
    }
    expedite_ = false;
    // At most max_group_ files: a group holds all its files' locks at once.
    std::set<Ino> group;
    while (!queued_.empty() && group.size() < max_group_) {
      group.insert(queued_.extract(queued_.begin()));
    }
    if (!queued_.empty()) first_queued_ms_ = NowMs() - gather_ms_;  // the rest: next, at once
    while (retry_due && !retry_.empty() && group.size() < max_group_) {
      group.insert(retry_.extract(retry_.begin()));
    }
    running_ = true;
    std::vector<Ino> failed;
    {
      MutexUnlock unlock(mu_);
      failed = commit_(std::vector<Ino>(group.begin(), group.end()));
    }
    running_ = false;
    if (failed.empty()) {
      retry_delay_ms_ = 0;
    } else {
      last_failed_ = true;
      retry_delay_ms_ =
          retry_delay_ms_ == 0 ? kFirstRetryMs : std::min(kMaxRetryMs, retry_delay_ms_ * 2);
      retry_at_ms_ = NowMs() + retry_delay_ms_;
      retry_.insert(failed.begin(), failed.end());
      // A drain waits for one attempt of each, not for the retries.
      if (drain_now_) drain_now_ = false;
    }
    cv_.NotifyAll();
  }
}

}  // namespace xet
