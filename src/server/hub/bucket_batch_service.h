// BucketBatchService: POST /api/buckets/{ns}/{name}/batch (NDJSON, server/hub/batch_request.h).
// The body is parsed whole first (a body that is not NDJSON objects applies nothing);
// operations that are invalid on their own, or copy from a bucket the caller cannot read,
// fail alone; the rest go to the Index in one transaction (Index::ApplyBucketBatch), which
// reports its own per-operation failures. 200 when all applied, else 422 listing failures.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "http/message.h"
#include "server/hub/bucket_gate.h"
#include "store/index.h"

namespace xet {

class BucketBatchService {
 public:
  // At most `max_batch_ops` operations in one batch (413 above). `now_ms` stamps the
  // entries. All references must outlive the service. Thread-safe.
  BucketBatchService(size_t max_batch_ops, std::function<int64_t()> now_ms, Index& index,
                     const BucketGate& gate);

  HttpResponse Batch(const HttpRequest& req, const RouteParams& params);
  // Pre-body check: BucketGate::CheckBucketWriter.
  std::optional<HttpResponse> CheckBatch(const HttpRequest& head, const RouteParams& params);

 private:
  const size_t max_batch_ops_;
  const std::function<int64_t()> now_ms_;
  Index& index_;
  const BucketGate& gate_;
};

}  // namespace xet
