// XetTokenService: the xet-read-token and xet-write-token endpoints. Each mints a
// short-lived CAS token whose scope is the bucket's full name, so the CAS routes
// (server/cas/cas_service.h) show the holder exactly the files and xorbs that bucket can see.
#pragma once

#include <cstdint>

#include "http/message.h"
#include "server/auth/token_service.h"
#include "server/hub/bucket_gate.h"
#include "server/hub/public_base_url.h"

namespace xet {

class XetTokenService {
 public:
  // Tokens live `cas_token_ttl_s` seconds; the casUrl is the public base URL. All
  // references must outlive the service. Thread-safe.
  XetTokenService(int64_t cas_token_ttl_s, TokenService& tokens, const BucketGate& gate,
                  const PublicBaseUrl& public_url);

  // GET /api/buckets/{ns}/{name}/xet-read-token[/{rev}]: needs read access to the bucket.
  HttpResponse XetReadToken(const HttpRequest& req, const RouteParams& params);
  // GET /api/buckets/{ns}/{name}/xet-write-token[/{rev}]: needs write access.
  HttpResponse XetWriteToken(const HttpRequest& req, const RouteParams& params);

 private:
  HttpResponse MintToken(const BucketCaller& caller, const BucketRecord& bucket,
                         Permission permission);

  const int64_t cas_token_ttl_s_;
  TokenService& tokens_;
  const BucketGate& gate_;
  const PublicBaseUrl& public_url_;
};

}  // namespace xet
