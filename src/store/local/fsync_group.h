// FsyncGroup: one fsync shared by concurrent callers that each need the same file (in
// practice a directory, after linking a new entry into it) made durable.
//
// Sync() returns the status of a sync that began after Sync() was called, so it covers every
// change the caller made before calling. While one sync runs, the callers that arrive join
// the next round; when it ends, one of them runs a single sync for the whole round (group
// commit) and the others take its result. A failed sync's error goes to every caller of its
// round; the next round tries again.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>

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
    bool done = false;           // guarded by mu_
    Status status;               // guarded by mu_; set when done
    std::condition_variable cv;  // this round's callers wait here
  };

  const std::function<Status()> sync_;
  std::mutex mu_;
  bool running_ = false;         // guarded by mu_: a round's sync is in progress
  std::shared_ptr<Round> next_;  // guarded by mu_: the round not yet started (may be null)
};

}  // namespace xet
