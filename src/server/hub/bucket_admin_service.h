// BucketAdminService: creating, describing, listing, deleting and moving buckets (the
// bucket API's /api/buckets/{ns}[/{name}] and /api/repos/move routes). Error answers as
// server/hub/hub_service.h describes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "http/message.h"
#include "server/hub/bucket_gate.h"
#include "server/hub/public_base_url.h"
#include "store/index.h"

namespace xet {

class BucketAdminService {
 public:
  // ListBuckets pages: `list_default_limit` buckets when ?limit is absent, larger limits
  // lowered to `list_max_limit`. `now_ms` stamps created and moved buckets.
  struct Limits {
    size_t list_default_limit = 100;
    size_t list_max_limit = 1000;
  };
  // All references must outlive the service. Thread-safe.
  BucketAdminService(Limits limits, std::function<int64_t()> now_ms, Index& index,
                     const BucketGate& gate, const PublicBaseUrl& public_url);

  // POST /api/buckets/{ns}/{name}  {private?, visibility?, resourceGroupId?, region?}
  HttpResponse CreateBucket(const HttpRequest& req, const RouteParams& params);
  // GET /api/buckets/{ns}/{name}
  HttpResponse GetBucketInfo(const HttpRequest& req, const RouteParams& params);
  // GET /api/buckets/{ns}  (?search, ?limit, ?cursor; "me" = every namespace)
  HttpResponse ListBuckets(const HttpRequest& req, const RouteParams& params);
  // DELETE /api/buckets/{ns}/{name}
  HttpResponse DeleteBucket(const HttpRequest& req, const RouteParams& params);
  // POST /api/repos/move  {"fromRepo", "toRepo", "type": "bucket"}
  HttpResponse MoveBucket(const HttpRequest& req, const RouteParams& params);

  // Pre-body checks of create (BucketGate::CheckBucketWriter) and move
  // (BucketGate::CheckWriter).
  std::optional<HttpResponse> CheckCreate(const HttpRequest& head, const RouteParams& params);
  std::optional<HttpResponse> CheckMove(const HttpRequest& head, const RouteParams& params);

 private:
  const Limits limits_;
  const std::function<int64_t()> now_ms_;
  Index& index_;
  const BucketGate& gate_;
  const PublicBaseUrl& public_url_;
};

}  // namespace xet
