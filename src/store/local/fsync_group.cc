#include "store/local/fsync_group.h"

namespace xet {

Status FsyncGroup::Sync() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!next_) next_ = std::make_shared<Round>();
  const std::shared_ptr<Round> mine = next_;
  while (!mine->done) {
    if (!running_) {
      // No sync in progress and this round not done: it is next_, and this caller leads it.
      running_ = true;
      next_.reset();  // later callers start a new round: this sync may miss their changes
      lock.unlock();
      Status st = sync_();
      lock.lock();
      mine->status = std::move(st);
      mine->done = true;
      running_ = false;
      mine->cv.notify_all();              // this round's callers
      if (next_) next_->cv.notify_one();  // one of the next round's callers leads it
      break;
    }
    mine->cv.wait(lock);
  }
  return mine->status;
}

}  // namespace xet
