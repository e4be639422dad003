// The Hub-compatible bucket API (the routes @huggingface/hub and huggingface_hub call for
// repositories of type "bucket") as handlers over an Index, an ObjectStore and the token
// service. Transport-independent like server/cas/cas_service.h; RegisterHubRoutes
// (server/hub/hub_routes.h) binds them to a Router. Permission rules: server/auth/bucket_access.h.
// One class per concern: BucketAdminService (create, info, list, delete, move),
// XetTokenService, BucketBatchService, BucketListingService (tree, paths-info) and
// ResolveService, over a shared BucketGate (who may read or write which bucket).
//
// Error answers are {"error": "..."}; a bucket that is absent or invisible to the caller
// answers 404 with X-Error-Code: RepoNotFound (401 to an anonymous caller), a missing entry
// on resolve 404 with X-Error-Code: EntryNotFound.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "server/auth/token_service.h"
#include "server/hub/bucket_admin_service.h"
#include "server/hub/bucket_batch_service.h"
#include "server/hub/bucket_gate.h"
#include "server/hub/bucket_listing_service.h"
#include "server/hub/public_base_url.h"
#include "server/hub/resolve_service.h"
#include "server/hub/xet_token_service.h"
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

// The bucket API's services over one node, sharing one BucketGate and one public base URL.
// RegisterHubRoutes binds each service's handlers.
class HubService {
 public:
  // All references must outlive the service. Thread-safe: handlers run concurrently.
  HubService(HubServiceConfig config, Index& index, ObjectStore& objects, TokenService& tokens);

  // Replaces the base of the URLs handed out (e.g. once an ephemeral port is known).
  void SetPublicUrl(std::string url) { public_url_.Set(std::move(url)); }

  BucketAdminService& admin() { return admin_; }
  XetTokenService& xet_tokens() { return xet_tokens_; }
  BucketBatchService& batch() { return batch_; }
  BucketListingService& listing() { return listing_; }
  ResolveService& resolve() { return resolve_; }

 private:
  PublicBaseUrl public_url_;
  BucketGate gate_;
  BucketAdminService admin_;
  XetTokenService xet_tokens_;
  BucketBatchService batch_;
  BucketListingService listing_;
  ResolveService resolve_;
};

}  // namespace xet
