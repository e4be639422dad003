#include "server/auth/bucket_access.h"

#include <algorithm>
#include <string>

namespace xet {

Result<BucketCaller> IdentifyBucketCaller(const TokenService& tokens, const HttpRequest& req) {
  const auto header = req.headers.Get("authorization");
  if (!header) return BucketCaller{};
  XET_ASSIGN_OR_RETURN(Principal p, tokens.Authenticate(header));
  return BucketCaller{std::move(p)};
}

bool ScopesCoverBucket(const Principal& p, std::string_view full_name) {
  return p.scopes.empty() ||
         std::find(p.scopes.begin(), p.scopes.end(), full_name) != p.scopes.end();
}

bool CanReadBucket(const BucketCaller& caller, const BucketRecord& bucket) {
  if (!bucket.is_private) return true;
  return caller.principal && ScopesCoverBucket(*caller.principal, bucket.FullName());
}

Status BucketNotVisible(const BucketCaller& caller, std::string_view full_name) {
  if (caller.anonymous()) {
    return Status::Unauthenticated("bucket " + std::string(full_name) +
                                   " needs a token (it is private or does not exist)");
  }
  return Status::NotFound("bucket " + std::string(full_name) + " not found");
}

Status CheckBucketWrite(const BucketCaller& caller, std::string_view full_name) {
  if (caller.anonymous()) {
    return Status::Unauthenticated("writing to bucket " + std::string(full_name) +
                                   " needs a token (Authorization: Bearer hf_...)");
  }
  XET_RETURN_IF_ERROR(RequirePermission(*caller.principal, Permission::kWrite));
  if (!ScopesCoverBucket(*caller.principal, full_name)) {
    return Status::PermissionDenied("this token's scopes do not include bucket " +
                                    std::string(full_name));
  }
  return Status::Ok();
}

}  // namespace xet
