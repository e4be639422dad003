#include "server/hub/bucket_listing_service.h"

#include "protocol/bucket_path.h"
#include "server/http_status.h"
#include "server/hub/bucket_json.h"
#include "server/hub/hub_query.h"
#include "server/hub/hub_urls.h"
#include "server/request_bodies.h"

namespace xet {

BucketListingService::BucketListingService(Limits limits, Index& index, const BucketGate& gate,
                                           const PublicBaseUrl& public_url)
    : limits_(limits), index_(index), gate_(gate), public_url_(public_url) {}

std::optional<HttpResponse> BucketListingService::CheckPathsInfo(const HttpRequest& head,
                                                                 const RouteParams& params) {
  return gate_.CheckBucketReader(head, params);
}

HttpResponse BucketListingService::Tree(const HttpRequest& req, const RouteParams& params) {
  auto caller = gate_.Caller(req);
  if (!caller.ok()) return ErrorResponse(caller.status());
  auto bucket = gate_.ReadableBucket(*caller, params);
  if (!bucket.ok()) return BucketErrorResponse(bucket.status());
  const auto raw_prefix = params.find("prefix");
  auto prefix = NormalizeBucketPrefix(raw_prefix == params.end() ? "" : raw_prefix->second);
  if (!prefix.ok()) return ErrorResponse(prefix.status());
  auto recursive = ParseBoolParam(req.QueryParam("recursive"), "recursive", false);
  if (!recursive.ok()) return ErrorResponse(recursive.status());
  auto limit =
      ParsePageLimit(req.QueryParam("limit"), limits_.tree_default_limit, limits_.tree_max_limit);
  if (!limit.ok()) return ErrorResponse(limit.status());
  const std::string cursor = req.QueryParam("cursor").value_or("");

  auto page = index_.ListBucketTree(bucket->ns, bucket->name, *prefix, *recursive, cursor, *limit);
  if (!page.ok()) {
    if (page.status().code() == Status::Code::kInvalidArgument) {
      return HttpResponse::Error(400, "malformed cursor: " + page.status().message());
    }
    return BucketErrorResponse(page.status());
  }
  HttpResponse res = HttpResponse::Json(BucketTreePageJson(page->items));
  if (page->next_cursor) {
    std::string url = BucketApiUrl(public_url_.Get(), bucket->FullName()) + "/tree";
    if (!prefix->empty()) url += "/" + PercentEncode(*prefix, /*keep_slash=*/true);
    url += std::string("?recursive=") + (*recursive ? "true" : "false") +
           "&limit=" + std::to_string(*limit) + "&cursor=" + PercentEncode(*page->next_cursor);
    res.headers.Set("Link", NextPageLink(url));
  }
  return res;
}

HttpResponse BucketListingService::PathsInfo(const HttpRequest& req, const RouteParams& params) {
  auto caller = gate_.Caller(req);
  if (!caller.ok()) return ErrorResponse(caller.status());
  auto bucket = gate_.ReadableBucket(*caller, params);
  if (!bucket.ok()) return BucketErrorResponse(bucket.status());
  auto paths = ParsePathsInfoBody(req.body, limits_.max_paths_info);
  if (!paths.ok()) return ErrorResponse(paths.status());
  auto entries = index_.GetBucketEntries(bucket->ns, bucket->name, *paths);
  if (!entries.ok()) return BucketErrorResponse(entries.status());
  return HttpResponse::Json(BucketFilesJson(*entries));
}

}  // namespace xet
