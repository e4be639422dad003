#include "server/hub/bucket_gate.h"

#include "protocol/bucket_path.h"
#include "server/http_status.h"

namespace xet {

Status ValidateBucketNames(const std::string& ns, const std::string& name) {
  XET_RETURN_IF_ERROR(ValidateBucketName(ns, "namespace"));
  return ValidateBucketName(name, "bucket name");
}

HttpResponse BucketErrorResponse(const Status& status) {
  HttpResponse res = ErrorResponse(status);
  if (status.code() == Status::Code::kNotFound || status.code() == Status::Code::kUnauthenticated) {
    res.headers.Set("X-Error-Code", "RepoNotFound");
  }
  return res;
}

BucketGate::BucketGate(Index& index, TokenService& tokens) : index_(index), tokens_(tokens) {}

Result<BucketCaller> BucketGate::Caller(const HttpRequest& req) const {
  return IdentifyBucketCaller(tokens_, req);
}

Result<BucketRecord> BucketGate::ReadableBucket(const BucketCaller& caller,
                                                const RouteParams& params) const {
  const std::string& ns = params.at("ns");
  const std::string& name = params.at("name");
  XET_RETURN_IF_ERROR(ValidateBucketNames(ns, name));
  XET_ASSIGN_OR_RETURN(auto bucket, index_.GetBucket(ns, name));
  if (!bucket || !CanReadBucket(caller, *bucket)) return BucketNotVisible(caller, ns + "/" + name);
  return std::move(*bucket);
}

Result<BucketRecord> BucketGate::WritableBucket(const BucketCaller& caller,
                                                const RouteParams& params) const {
  const std::string& ns = params.at("ns");
  const std::string& name = params.at("name");
  XET_RETURN_IF_ERROR(ValidateBucketNames(ns, name));
  XET_RETURN_IF_ERROR(CheckBucketWrite(caller, ns + "/" + name));
  XET_ASSIGN_OR_RETURN(auto bucket, index_.GetBucket(ns, name));
  if (!bucket) return Status::NotFound("bucket " + ns + "/" + name + " not found");
  return std::move(*bucket);
}

std::optional<HttpResponse> BucketGate::CheckBucketWriter(const HttpRequest& head,
                                                          const RouteParams& params) const {
  auto caller = Caller(head);
  if (!caller.ok()) return ErrorResponse(caller.status());
  const std::string& ns = params.at("ns");
  const std::string& name = params.at("name");
  if (Status st = ValidateBucketNames(ns, name); !st.ok()) return ErrorResponse(st);
  if (Status st = CheckBucketWrite(*caller, ns + "/" + name); !st.ok()) return ErrorResponse(st);
  return std::nullopt;
}

std::optional<HttpResponse> BucketGate::CheckWriter(const HttpRequest& head) const {
  auto caller = Caller(head);
  if (!caller.ok()) return ErrorResponse(caller.status());
  if (caller->anonymous()) {
    return ErrorResponse(Status::Unauthenticated("this request needs a token with write access"));
  }
  if (Status st = RequirePermission(*caller->principal, Permission::kWrite); !st.ok()) {
    return ErrorResponse(st);
  }
  return std::nullopt;
}

std::optional<HttpResponse> BucketGate::CheckBucketReader(const HttpRequest& head,
                                                          const RouteParams& params) const {
  auto caller = Caller(head);
  if (!caller.ok()) return ErrorResponse(caller.status());
  auto bucket = ReadableBucket(*caller, params);
  if (!bucket.ok()) return BucketErrorResponse(bucket.status());
  return std::nullopt;
}

}  // namespace xet
