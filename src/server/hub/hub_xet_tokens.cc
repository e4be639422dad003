// HubService: the xet-read-token and xet-write-token endpoints. Each mints a short-lived
// CAS token whose scope is the bucket's full name, so the CAS routes (server/cas/cas_service.h)
// show the holder exactly the files and xorbs that bucket can see.
#include <string>

#include "server/http_status.h"
#include "server/hub/bucket_json.h"
#include "server/hub/hub_service.h"

namespace xet {

HttpResponse HubService::MintToken(const BucketCaller& caller, const BucketRecord& bucket,
                                   Permission permission) {
  const int64_t exp = tokens_.Now() + config_.cas_token_ttl_s;
  const std::string token =
      tokens_.MintCasToken(caller.token_id(), permission, bucket.FullName(), exp);
  const std::string cas_url = PublicUrl();
  HttpResponse res = HttpResponse::Json(XetTokenJson(token, cas_url, exp));
  res.headers.Set("X-Xet-Access-Token", token);
  res.headers.Set("X-Xet-Cas-Url", cas_url);
  res.headers.Set("X-Xet-Token-Expiration", std::to_string(exp));
  res.headers.Set("Cache-Control", "no-store");
  return res;
}

HttpResponse HubService::XetReadToken(const HttpRequest& req, const RouteParams& params) {
  auto caller = IdentifyBucketCaller(tokens_, req);
  if (!caller.ok()) return ErrorResponse(caller.status());
  auto bucket = ReadableBucket(*caller, params);
  if (!bucket.ok()) return BucketErrorResponse(bucket.status());
  return MintToken(*caller, *bucket, Permission::kRead);
}

HttpResponse HubService::XetWriteToken(const HttpRequest& req, const RouteParams& params) {
  auto caller = IdentifyBucketCaller(tokens_, req);
  if (!caller.ok()) return ErrorResponse(caller.status());
  auto bucket = WritableBucket(*caller, params);
  if (!bucket.ok()) return BucketErrorResponse(bucket.status());
  return MintToken(*caller, *bucket, Permission::kWrite);
}

}  // namespace xet
