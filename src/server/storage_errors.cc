#include "server/storage_errors.h"

#include <string>

#include "http/access_log.h"

namespace xet {
namespace {

std::string_view StoreName(StorageArea area) {
  return area == StorageArea::kObjects ? "objects" : "index";
}

Counter& StorageErrors(Metrics& metrics, std::string_view cause, std::string_view store) {
  return metrics.GetCounter("xetstore_storage_errors_total",
                            "Store operations that failed because of the data disk, by cause "
                            "(no_space: disk or quota full; io_error: other I/O failures).",
                            {{"cause", std::string(cause)}, {"store", std::string(store)}});
}

}  // namespace

StorageErrorReporter::StorageErrorReporter(Metrics& metrics, StorageArea area, Sink sink,
                                           LogThrottle::Clock clock,
                                           std::chrono::steady_clock::duration interval)
    : no_space_(StorageErrors(metrics, "no_space", StoreName(area))),
      io_error_(StorageErrors(metrics, "io_error", StoreName(area))),
      store_(StoreName(area)),
      sink_(sink ? std::move(sink) : Sink(StderrAccessLogSink())),
      throttle_(interval, std::move(clock)) {}

Status StorageErrorReporter::Report(const Status& status, StorageOp op) {
  const bool no_space = status.code() == Status::Code::kInsufficientStorage;
  if (!no_space && status.code() != Status::Code::kIoError) return status;
  (no_space ? no_space_ : io_error_).Increment();
  const std::string cause = no_space ? "no_space" : "io_error";
  const std::string summary = std::string(no_space ? "no space left" : "I/O error") +
                              " on the data disk (" + std::string(store_) + ")";
  if (const auto suppressed = throttle_.Admit(cause)) {
    std::string line = "xetstore: storage error (cause=" + cause +
                       ", store=" + std::string(store_) + "): " + summary + ": " + status.message();
    if (*suppressed > 0) {
      line += " [" + std::to_string(*suppressed) + " more like it since the last report]";
    }
    sink_(line);
  }
  if (no_space || op == StorageOp::kWrite) return Status::InsufficientStorage(summary);
  return status;
}

}  // namespace xet
