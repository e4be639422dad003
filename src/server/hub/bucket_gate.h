// BucketGate: who is asking and which bucket they may read or write, for every service of
// the bucket API (server/hub/hub_service.h). Permission rules: server/auth/bucket_access.h.
#pragma once

#include <optional>

#include "http/message.h"
#include "server/auth/bucket_access.h"
#include "server/auth/token_service.h"
#include "store/index.h"

namespace xet {

class BucketGate {
 public:
  // Both must outlive the gate. Thread-safe.
  BucketGate(Index& index, TokenService& tokens);

  // The caller identified by the request's token (anonymous without one), or the error
  // answer for an invalid token.
  Result<BucketCaller> Caller(const HttpRequest& req) const;

  // The bucket named by params "ns" and "name" if `caller` may read it; InvalidArgument for
  // a malformed name, else BucketNotVisible's error.
  Result<BucketRecord> ReadableBucket(const BucketCaller& caller, const RouteParams& params) const;
  // The bucket if `caller` may write to it: InvalidArgument, Unauthenticated,
  // PermissionDenied (server/auth/bucket_access.h) or NotFound.
  Result<BucketRecord> WritableBucket(const BucketCaller& caller, const RouteParams& params) const;

  // Pre-body checks (RouteOptions::pre_body), answering as the handlers would before they
  // read the body: CheckBucketWriter (create, batch) needs a valid token allowed to write
  // the bucket named by "ns"/"name" (401/403; 400 for a malformed name); CheckWriter
  // (move, whose buckets are in the body) a valid token with write permission;
  // CheckBucketReader (paths-info) a caller who may read the bucket (401/404). The handlers
  // still make every check.
  std::optional<HttpResponse> CheckBucketWriter(const HttpRequest& head,
                                                const RouteParams& params) const;
  std::optional<HttpResponse> CheckWriter(const HttpRequest& head) const;
  std::optional<HttpResponse> CheckBucketReader(const HttpRequest& head,
                                                const RouteParams& params) const;

 private:
  Index& index_;
  TokenService& tokens_;
};

// Both a namespace and a bucket name valid (protocol/bucket_path.h), else InvalidArgument.
Status ValidateBucketNames(const std::string& ns, const std::string& name);

// The error answer for a failed bucket lookup or check: ErrorResponse(status), plus
// X-Error-Code: RepoNotFound for NotFound and Unauthenticated (clients map it to "bucket not
// found").
HttpResponse BucketErrorResponse(const Status& status);

}  // namespace xet
