// The permission rules of the bucket API, as pure functions of the caller and the bucket.
//
// - A bucket's Scope is its full name "NAMESPACE/BUCKET". A user token's scopes name the
//   buckets it may use; an empty scope list means every bucket.
// - Reading: a public bucket needs no token; a private one needs a token whose scopes
//   cover it (any permission). A private bucket the caller cannot read is reported as
//   absent (404), so its existence does not leak; to an anonymous caller both absent and
//   private buckets answer 401 (authentication required).
// - Writing (batch, delete, write token, move) and creating: Permission::kWrite or more,
//   and the bucket's name covered by the scopes. Anonymous: 401; otherwise 403.
// - An Authorization header that is present but invalid is always 401, even for public
//   buckets.
#pragma once

#include <optional>
#include <string_view>

#include "http/message.h"
#include "server/auth/token_service.h"
#include "store/bucket_records.h"

namespace xet {

// Who sent a bucket request: a verified token, or nobody (no Authorization header).
struct BucketCaller {
  std::optional<Principal> principal;

  bool anonymous() const { return !principal.has_value(); }
  // For CAS tokens minted on the caller's behalf.
  std::string token_id() const { return principal ? principal->token_id : "anonymous"; }
};

// Anonymous without an Authorization header; Unauthenticated when the header is present but
// malformed, unknown, revoked or expired.
Result<BucketCaller> IdentifyBucketCaller(const TokenService& tokens, const HttpRequest& req);

// Whether `p`'s scopes include the bucket named `full_name` (or are unrestricted).
bool ScopesCoverBucket(const Principal& p, std::string_view full_name);

// Whether `caller` may read `bucket` (list, info, tree, paths-info, resolve, read token).
bool CanReadBucket(const BucketCaller& caller, const BucketRecord& bucket);

// The error for a bucket `caller` cannot read or that does not exist: Unauthenticated for an
// anonymous caller, NotFound otherwise. (The two cases are indistinguishable on purpose.)
Status BucketNotVisible(const BucketCaller& caller, std::string_view full_name);

// OK when `caller` may write to (or create, delete, rename) the bucket named `full_name`:
// Unauthenticated for an anonymous caller, PermissionDenied for a read-only token or one
// whose scopes do not cover the name.
Status CheckBucketWrite(const BucketCaller& caller, std::string_view full_name);

}  // namespace xet
