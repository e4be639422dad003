// The Hub-compatible bucket API (the routes @huggingface/hub and huggingface_hub call for
// repositories of type "bucket") as handlers over an Index, an ObjectStore and the token
// service. Transport-independent like server/cas/cas_service.h; RegisterHubRoutes
// (server/hub/hub_routes.h) binds them to a Router. Permission rules: server/auth/bucket_access.h.
//
// Error answers are {"error": "..."}; a bucket that is absent or invisible to the caller
// answers 404 with X-Error-Code: RepoNotFound (401 to an anonymous caller), a missing entry
// on resolve 404 with X-Error-Code: EntryNotFound.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "http/message.h"
#include "server/auth/bucket_access.h"
#include "server/auth/token_service.h"
#include "server/cache/xorb_record_cache.h"
#include "store/index.h"
#include "store/object_store.h"

namespace xet {

struct HubServiceConfig {
  std::string public_url;            // base of URLs handed out (also the casUrl), no trailing '/'
  int64_t cas_token_ttl_s = 3600;    // lifetime of tokens from xet-read-token / xet-write-token
  size_t max_batch_ops = 100'000;    // operations in one batch (413 above)
  size_t tree_default_limit = 1000;  // items in one tree page when ?limit is absent
  size_t tree_max_limit = 10'000;    // larger ?limit values are lowered to this
  size_t list_default_limit = 100;   // buckets in one GET /api/buckets/NS page
  size_t list_max_limit = 1000;
  size_t max_paths_info = 1000;        // paths in one paths-info request (400 above)
  size_t xorb_cache_bytes = 64 << 20;  // chunk tables cached for resolve GETs
  std::function<int64_t()> now_ms;     // unix milliseconds; default: system clock
};

class HubService {
 public:
  // All references must outlive the service. Thread-safe: handlers run concurrently.
  HubService(HubServiceConfig config, Index& index, ObjectStore& objects, TokenService& tokens);

  // Replaces the base of the URLs handed out (e.g. once an ephemeral port is known).
  void SetPublicUrl(std::string url);

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
  // GET /api/buckets/{ns}/{name}/xet-read-token[/{rev}], .../xet-write-token[/{rev}]
  HttpResponse XetReadToken(const HttpRequest& req, const RouteParams& params);
  HttpResponse XetWriteToken(const HttpRequest& req, const RouteParams& params);
  // POST /api/buckets/{ns}/{name}/batch  (NDJSON, server/hub/batch_request.h)
  HttpResponse Batch(const HttpRequest& req, const RouteParams& params);
  // GET /api/buckets/{ns}/{name}/tree[/{*prefix}]  (?recursive, ?limit, ?cursor)
  HttpResponse Tree(const HttpRequest& req, const RouteParams& params);
  // POST /api/buckets/{ns}/{name}/paths-info  {"paths": [...]}
  HttpResponse PathsInfo(const HttpRequest& req, const RouteParams& params);
  // GET|HEAD /buckets/{ns}/{name}/resolve/{*path}
  HttpResponse Resolve(const HttpRequest& req, const RouteParams& params);

  // Pre-body checks (RouteOptions::pre_body), answering as the handlers would before they
  // read the body: CheckBucketWriter (create, batch) needs a valid token allowed to write
  // the bucket named by "ns"/"name" (401/403; 400 for a malformed name); CheckWriter
  // (move, whose buckets are in the body) a valid token with write permission;
  // CheckBucketReader (paths-info) a caller who may read the bucket (401/404). The handlers
  // still make every check.
  std::optional<HttpResponse> CheckBucketWriter(const HttpRequest& head, const RouteParams& params);
  std::optional<HttpResponse> CheckWriter(const HttpRequest& head, const RouteParams& params);
  std::optional<HttpResponse> CheckBucketReader(const HttpRequest& head, const RouteParams& params);

 private:
  // The bucket named by params "ns" and "name" if `caller` may read it; InvalidArgument for
  // a malformed name, else BucketNotVisible's error.
  Result<BucketRecord> ReadableBucket(const BucketCaller& caller, const RouteParams& params);
  // The bucket if `caller` may write to it: InvalidArgument, Unauthenticated,
  // PermissionDenied (server/auth/bucket_access.h) or NotFound.
  Result<BucketRecord> WritableBucket(const BucketCaller& caller, const RouteParams& params);
  HttpResponse MintToken(const BucketCaller& caller, const BucketRecord& bucket,
                         Permission permission);
  std::string PublicUrl() const;
  int64_t NowMs() const;

  HubServiceConfig config_;
  mutable std::mutex public_url_mu_;  // guards config_.public_url
  Index& index_;
  ObjectStore& objects_;
  TokenService& tokens_;
  XorbRecordCache xorb_cache_;
};

// The error answer for a failed bucket lookup or check: ErrorResponse(status), plus
// X-Error-Code: RepoNotFound for NotFound and Unauthenticated (clients map it to "bucket not
// found").
HttpResponse BucketErrorResponse(const Status& status);

}  // namespace xet
