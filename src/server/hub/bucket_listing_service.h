// BucketListingService: listing a bucket (GET .../tree[/{prefix}], paginated with Link
// headers) and looking up many paths at once (POST .../paths-info).
#pragma once

#include <cstddef>
#include <optional>

#include "http/message.h"
#include "server/hub/bucket_gate.h"
#include "server/hub/public_base_url.h"
#include "store/index.h"

namespace xet {

class BucketListingService {
 public:
  struct Limits {
    size_t tree_default_limit = 1000;  // items in one tree page when ?limit is absent
    size_t tree_max_limit = 10'000;    // larger ?limit values are lowered to this
    size_t max_paths_info = 1000;      // paths in one paths-info request (400 above)
  };
  // All references must outlive the service. Thread-safe.
  BucketListingService(Limits limits, Index& index, const BucketGate& gate,
                       const PublicBaseUrl& public_url);

  // GET /api/buckets/{ns}/{name}/tree[/{*prefix}]  (?recursive, ?limit, ?cursor)
  HttpResponse Tree(const HttpRequest& req, const RouteParams& params);
  // POST /api/buckets/{ns}/{name}/paths-info  {"paths": [...]}
  HttpResponse PathsInfo(const HttpRequest& req, const RouteParams& params);
  // Pre-body check of paths-info: BucketGate::CheckBucketReader.
  std::optional<HttpResponse> CheckPathsInfo(const HttpRequest& head, const RouteParams& params);

 private:
  const Limits limits_;
  Index& index_;
  const BucketGate& gate_;
  const PublicBaseUrl& public_url_;
};

}  // namespace xet
