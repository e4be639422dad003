// Decorators that count storage failures of an Index and an ObjectStore in the metrics
// registry (xetstore_index_errors_total, xetstore_object_store_errors_total{op}), so
// operators see a failing disk or database on /metrics. They forward every call; a failure
// that is the disk's (no space, an I/O error) also goes through a StorageErrorReporter
// (counted by cause, logged once per burst), and a full disk comes back as
// InsufficientStorage naming only the cause and the store, which the client is shown.
#pragma once

#include <memory>

#include "http/metrics.h"
#include "store/index.h"
#include "store/object_store.h"

namespace xet {

// `inner` and `metrics` must outlive the returned objects.
std::unique_ptr<Index> InstrumentIndex(Index& inner, Metrics& metrics);
std::unique_ptr<ObjectStore> InstrumentObjectStore(ObjectStore& inner, Metrics& metrics);

}  // namespace xet
