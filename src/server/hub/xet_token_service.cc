#include "server/hub/xet_token_service.h"

#include <string>

#include "server/http_status.h"
#include "server/hub/bucket_json.h"

namespace xet {

XetTokenService::XetTokenService(int64_t cas_token_ttl_s, TokenService& tokens,
                                 const BucketGate& gate, const PublicBaseUrl& public_url)
    : cas_token_ttl_s_(cas_token_ttl_s), tokens_(tokens), gate_(gate), public_url_(public_url) {}

HttpResponse XetTokenService::MintToken(const BucketCaller& caller, const BucketRecord& bucket,
                                        Permission permission) {
  const int64_t exp = tokens_.Now() + cas_token_ttl_s_;
  const std::string token =
      tokens_.MintCasToken(caller.token_id(), permission, bucket.FullName(), exp);
  const std::string cas_url = public_url_.Get();
  HttpResponse res = HttpResponse::Json(XetTokenJson(token, cas_url, exp));
  res.headers.Set("X-Xet-Access-Token", token);
  res.headers.Set("X-Xet-Cas-Url", cas_url);
  res.headers.Set("X-Xet-Token-Expiration", std::to_string(exp));
  res.headers.Set("Cache-Control", "no-store");
  return res;
}

HttpResponse XetTokenService::XetReadToken(const HttpRequest& req, const RouteParams& params) {
  auto caller = gate_.Caller(req);
  if (!caller.ok()) return ErrorResponse(caller.status());
  auto bucket = gate_.ReadableBucket(*caller, params);
  if (!bucket.ok()) return BucketErrorResponse(bucket.status());
  return MintToken(*caller, *bucket, Permission::kRead);
}

HttpResponse XetTokenService::XetWriteToken(const HttpRequest& req, const RouteParams& params) {
  auto caller = gate_.Caller(req);
  if (!caller.ok()) return ErrorResponse(caller.status());
  auto bucket = gate_.WritableBucket(*caller, params);
  if (!bucket.ok()) return BucketErrorResponse(bucket.status());
  return MintToken(*caller, *bucket, Permission::kWrite);
}

}  // namespace xet
