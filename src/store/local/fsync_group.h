// FsyncGroup: one fsync shared by concurrent callers that each need the same file (in
// practice a directory, after linking a new entry into it) made durable.
//
// Sync() returns the status of a sync that began after Sync() was called, so it covers every
// change the caller made before calling. While one sync runs, the callers that arrive join
// the next round; when it ends, one of them runs a single sync for the whole round (group
// commit) and the others take its result. A failed sync's error goes to every caller of its
// round; the next round tries again.
#pragma once

#include <functional>
#include <memory>

#include "common/mutex.h"
#include "common/status.h"

namespace xet {

class FsyncGroup {
 public:
  // `sync` makes the file durable (e.g. opens it and fsyncs); called by one thread at a time.
  explicit FsyncGroup(std::function<Status()> sync) : sync_(std::move(sync)) {}
  FsyncGroup(const FsyncGroup&) = delete;
  FsyncGroup& operator=(const FsyncGroup&) = delete;

  Status Sync();

 private:
  struct Round {
    // done and status are guarded by the group's mu_ (not expressible on a nested struct).
    bool done = false;
    Status status;  // set when done
    CondVar cv;     // this round's callers wait here
  };

  const std::function<Status()> sync_;
  Mutex mu_;
  bool running_ GUARDED_BY(mu_) = false;         // a round's sync is in progress
  std::shared_ptr<Round> next_ GUARDED_BY(mu_);  // the round not yet started (may be null)
};

}  // namespace xet
