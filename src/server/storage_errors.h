// StorageErrorReporter: how the server reports a failing data disk. Every failure of a
// store that is the disk's doing (no space, an I/O error) is counted in
// xetstore_storage_errors_total{cause="no_space"|"io_error", store="objects"|"index"} and
// logged, at most one line per cause and store per interval with the number held back,
// so a burst of failing uploads on a full disk logs one line, not thousands.
#pragma once

#include <chrono>
#include <functional>
#include <string_view>

#include "common/log_throttle.h"
#include "common/status.h"
#include "http/metrics.h"

namespace xet {

// Which store of the data directory a failure came from.
enum class StorageArea { kObjects, kIndex };
// Whether the failed operation read or wrote (changed) the store.
enum class StorageOp { kRead, kWrite };

class StorageErrorReporter {
 public:
  using Sink = std::function<void(std::string_view line)>;
  static constexpr std::chrono::seconds kDefaultLogInterval{10};

  // `metrics` must outlive the reporter. `sink` receives each log line (default: stderr,
  // one write per line); `clock` and `interval` pace the log (tests inject them).
  StorageErrorReporter(Metrics& metrics, StorageArea area, Sink sink = {},
                       LogThrottle::Clock clock = {},
                       std::chrono::steady_clock::duration interval = kDefaultLogInterval);

  // Reports `status`, a failed `op` of this reporter's store, and returns the status to
  // pass on. InsufficientStorage and IoError are counted and logged (with the full
  // message). What is passed on names only the cause and the store, which the HTTP answer
  // (507) shows: an InsufficientStorage as "no space left on the data disk (objects)", an
  // IoError of a write as InsufficientStorage "I/O error on the data disk (objects)" (the
  // data could not be stored). An IoError of a read is passed on unchanged (its answer is
  // a generic 500). Every other status (NotFound, InvalidArgument, ...) is the caller's
  // business: neither counted nor logged, returned as is.
  Status Report(const Status& status, StorageOp op);

 private:
  Counter& no_space_;
  Counter& io_error_;
  const std::string_view store_;  // "objects" or "index"
  const Sink sink_;
  LogThrottle throttle_;
};

}  // namespace xet
