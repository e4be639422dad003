#include "server/hub/bucket_admin_service.h"

#include <nlohmann/json.hpp>

#include "protocol/bucket_path.h"
#include "server/http_status.h"
#include "server/hub/bucket_json.h"
#include "server/hub/hub_query.h"
#include "server/hub/hub_urls.h"
#include "server/request_bodies.h"

namespace xet {
namespace {

using nlohmann::json;

// The namespace the Hub clients use for "the caller's own account". xetstore tokens belong
// to no account: listing "me" lists every namespace, creating in it is refused.
constexpr std::string_view kMeNamespace = "me";

}  // namespace

BucketAdminService::BucketAdminService(Limits limits, std::function<int64_t()> now_ms, Index& index,
                                       const BucketGate& gate, const PublicBaseUrl& public_url)
    : limits_(limits),
      now_ms_(std::move(now_ms)),
      index_(index),
      gate_(gate),
      public_url_(public_url) {}

std::optional<HttpResponse> BucketAdminService::CheckCreate(const HttpRequest& head,
                                                            const RouteParams& params) {
  return gate_.CheckBucketWriter(head, params);
}

std::optional<HttpResponse> BucketAdminService::CheckMove(const HttpRequest& head,
                                                          const RouteParams&) {
  return gate_.CheckWriter(head);
}

HttpResponse BucketAdminService::CreateBucket(const HttpRequest& req, const RouteParams& params) {
  auto caller = gate_.Caller(req);
  if (!caller.ok()) return ErrorResponse(caller.status());
  const std::string& ns = params.at("ns");
  const std::string& name = params.at("name");
  if (Status st = ValidateBucketNames(ns, name); !st.ok()) return ErrorResponse(st);
  if (ns == kMeNamespace) {
    return HttpResponse::Error(400,
                               "namespace 'me' stands for a user account, which xetstore tokens "
                               "do not have; create NAMESPACE/BUCKET with an explicit namespace");
  }
  const std::string full = ns + "/" + name;
  if (Status st = CheckBucketWrite(*caller, full); !st.ok()) return ErrorResponse(st);
  auto is_private = ParseBucketCreateBody(req.body);
  if (!is_private.ok()) return ErrorResponse(is_private.status());
  auto created = index_.CreateBucket(ns, name, *is_private, now_ms_());
  if (!created.ok()) {
    if (created.status().code() == Status::Code::kAlreadyExists) {
      return HttpResponse::Error(409, "bucket " + full + " already exists");
    }
    return ErrorResponse(created.status());
  }
  return HttpResponse::Json(
      DumpJson(BucketCreatedJson(BucketPageUrl(public_url_.Get(), full), full)));
}

HttpResponse BucketAdminService::GetBucketInfo(const HttpRequest& req, const RouteParams& params) {
  auto caller = gate_.Caller(req);
  if (!caller.ok()) return ErrorResponse(caller.status());
  auto bucket = gate_.ReadableBucket(*caller, params);
  if (!bucket.ok()) return BucketErrorResponse(bucket.status());
  return HttpResponse::Json(DumpJson(BucketDetailJson(*bucket)));
}

HttpResponse BucketAdminService::ListBuckets(const HttpRequest& req, const RouteParams& params) {
  auto caller = gate_.Caller(req);
  if (!caller.ok()) return ErrorResponse(caller.status());
  const std::string& ns_param = params.at("ns");
  std::string ns;
  if (ns_param != kMeNamespace) {
    if (Status st = ValidateBucketName(ns_param, "namespace"); !st.ok()) return ErrorResponse(st);
    ns = ns_param;
  }
  const std::string search = req.QueryParam("search").value_or("");
  if (search.size() > kMaxBucketNameBytes) {
    return HttpResponse::Error(400, "search is longer than 96 characters");
  }
  auto limit =
      ParsePageLimit(req.QueryParam("limit"), limits_.list_default_limit, limits_.list_max_limit);
  if (!limit.ok()) return ErrorResponse(limit.status());
  std::string after = req.QueryParam("cursor").value_or("");
  if (!after.empty()) {
    if (Status st = ValidateBucketFullName(after); !st.ok()) {
      return HttpResponse::Error(400, "malformed cursor");
    }
  }

  // Buckets the caller cannot read are skipped; a bounded number of index pages is read per
  // request, so a page may come back short with a next link.
  constexpr int kMaxScans = 16;
  json page = json::array();
  bool more = false;
  for (int scan = 0; scan < kMaxScans && page.size() < *limit; ++scan) {
    auto batch = index_.ListBuckets(ns, search, after, *limit);
    if (!batch.ok()) return ErrorResponse(batch.status());
    more = batch->size() == *limit;
    for (const BucketRecord& b : *batch) {
      after = b.FullName();
      if (!CanReadBucket(*caller, b)) continue;
      page.push_back(BucketInfoJson(b));
      if (page.size() == *limit) {
        more = more || &b != &batch->back();
        break;
      }
    }
    if (!more) break;
  }
  HttpResponse res = HttpResponse::Json(DumpJson(page));
  if (more) {
    std::string url = public_url_.Get() + "/api/buckets/" + ns_param + "?";
    if (!search.empty()) url += "search=" + PercentEncode(search) + "&";
    url += "limit=" + std::to_string(*limit) + "&cursor=" + PercentEncode(after);
    res.headers.Set("Link", NextPageLink(url));
  }
  return res;
}

HttpResponse BucketAdminService::DeleteBucket(const HttpRequest& req, const RouteParams& params) {
  auto caller = gate_.Caller(req);
  if (!caller.ok()) return ErrorResponse(caller.status());
  const std::string& ns = params.at("ns");
  const std::string& name = params.at("name");
  if (Status st = ValidateBucketNames(ns, name); !st.ok()) return ErrorResponse(st);
  if (Status st = CheckBucketWrite(*caller, ns + "/" + name); !st.ok()) return ErrorResponse(st);
  if (Status st = index_.DeleteBucket(ns, name); !st.ok()) return BucketErrorResponse(st);
  return HttpResponse::Json("{}");
}

HttpResponse BucketAdminService::MoveBucket(const HttpRequest& req, const RouteParams&) {
  auto caller = gate_.Caller(req);
  if (!caller.ok()) return ErrorResponse(caller.status());
  auto move = ParseBucketMoveBody(req.body);
  if (!move.ok()) return ErrorResponse(move.status());
  const std::string to = move->ToId();
  for (const std::string& id : {move->FromId(), to}) {
    if (Status st = CheckBucketWrite(*caller, id); !st.ok()) return ErrorResponse(st);
  }
  Status st =
      index_.MoveBucket(move->from_ns, move->from_name, move->to_ns, move->to_name, now_ms_());
  if (st.code() == Status::Code::kAlreadyExists) {
    return HttpResponse::Error(409, "bucket " + to + " already exists");
  }
  if (!st.ok()) return BucketErrorResponse(st);
  return HttpResponse::Json(DumpJson(BucketCreatedJson(BucketPageUrl(public_url_.Get(), to), to)));
}

}  // namespace xet
