#include "store/local/fsync_group.h"

namespace xet {

Status FsyncGroup::Sync() {
  MutexLock lock(mu_);
  if (!next_) next_ = std::make_shared<Round>();
  const std::shared_ptr<Round> mine = next_;
  while (!mine->done) {
    if (!running_) {
      // No sync in progress and this round not done: it is next_, and this caller leads it.
      running_ = true;
      next_.reset();  // later callers start a new round: this sync may miss their changes
      Status st;
      {
        MutexUnlock unlocked(mu_);
        st = sync_();
      }
      mine->status = std::move(st);
      mine->done = true;
      running_ = false;
      mine->cv.NotifyAll();              // this round's callers
      if (next_) next_->cv.NotifyOne();  // one of the next round's callers leads it
      break;
    }
    mine->cv.Wait(mu_);
  }
  return mine->status;
}

}  // namespace xet
