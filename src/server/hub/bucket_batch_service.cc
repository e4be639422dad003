#include "server/hub/bucket_batch_service.h"

#include <map>
#include <vector>

#include "server/http_status.h"
#include "server/hub/batch_request.h"
#include "server/hub/bucket_json.h"

namespace xet {

BucketBatchService::BucketBatchService(size_t max_batch_ops, std::function<int64_t()> now_ms,
                                       Index& index, const BucketGate& gate)
    : max_batch_ops_(max_batch_ops), now_ms_(std::move(now_ms)), index_(index), gate_(gate) {}

std::optional<HttpResponse> BucketBatchService::CheckBatch(const HttpRequest& head,
                                                           const RouteParams& params) {
  return gate_.CheckBucketWriter(head, params);
}

HttpResponse BucketBatchService::Batch(const HttpRequest& req, const RouteParams& params) {
  auto caller = gate_.Caller(req);
  if (!caller.ok()) return ErrorResponse(caller.status());
  auto bucket = gate_.WritableBucket(*caller, params);
  if (!bucket.ok()) return BucketErrorResponse(bucket.status());
  auto lines = ParseBatchRequest(req.body, bucket->FullName(), max_batch_ops_);
  if (!lines.ok()) return ErrorResponse(lines.status());

  // Copies read their source bucket: the caller must be allowed to read it.
  std::map<std::string, bool, std::less<>> source_readable;
  auto readable = [&](const std::string& full) -> Result<bool> {
    if (full == bucket->FullName()) return true;
    if (auto it = source_readable.find(full); it != source_readable.end()) return it->second;
    const size_t slash = full.find('/');
    XET_ASSIGN_OR_RETURN(auto src, index_.GetBucket(full.substr(0, slash), full.substr(slash + 1)));
    const bool ok = src && CanReadBucket(*caller, *src);
    source_readable.emplace(full, ok);
    return ok;
  };

  std::vector<BucketOp> ops;
  std::vector<size_t> op_line;  // ops[i] comes from (*lines)[op_line[i]]
  ops.reserve(lines->size());
  op_line.reserve(lines->size());
  for (size_t i = 0; i < lines->size(); ++i) {
    BatchRequestOp& line = (*lines)[i];
    if (!line.op) continue;
    if (!line.op->source_bucket.empty()) {
      auto ok = readable(line.op->source_bucket);
      if (!ok.ok()) return ErrorResponse(ok.status());
      if (!*ok) {
        line.error = "source bucket " + line.op->source_bucket + " not found";
        line.op.reset();
        continue;
      }
    }
    ops.push_back(std::move(*line.op));
    op_line.push_back(i);
  }

  BucketBatchResult applied;
  if (!ops.empty()) {
    auto result = index_.ApplyBucketBatch(bucket->ns, bucket->name, ops, now_ms_());
    if (!result.ok()) return BucketErrorResponse(result.status());
    if (result->ops.size() != ops.size()) {
      return ErrorResponse(Status::Internal("index answered for a different number of operations"));
    }
    applied = std::move(*result);
  }
  for (size_t k = 0; k < ops.size(); ++k) {
    if (applied.ops[k].ok) continue;
    const std::string& why = applied.ops[k].error;
    (*lines)[op_line[k]].error = why.empty() ? "operation failed" : why;
  }

  std::vector<BatchFailure> failed;
  for (const BatchRequestOp& line : *lines) {
    if (!line.error.empty()) failed.push_back({line.path, line.error});
  }
  const uint64_t processed = lines->size();
  return HttpResponse::Json(BatchAnswerJson(processed, processed - failed.size(), failed),
                            failed.empty() ? 200 : 422);
}

}  // namespace xet
