#include "server/hub/hub_service.h"

#include <chrono>
#include <nlohmann/json.hpp>

#include "protocol/bucket_path.h"
#include "server/http_status.h"
#include "server/hub/batch_request.h"
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

int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Status ValidateNames(const std::string& ns, const std::string& name) {
  XET_RETURN_IF_ERROR(ValidateBucketName(ns, "namespace"));
  return ValidateBucketName(name, "bucket name");
}

}  // namespace

HttpResponse BucketErrorResponse(const Status& status) {
  HttpResponse res = ErrorResponse(status);
  if (status.code() == Status::Code::kNotFound || status.code() == Status::Code::kUnauthenticated) {
    res.headers.Set("X-Error-Code", "RepoNotFound");
  }
  return res;
}

HubService::HubService(HubServiceConfig config, Index& index, ObjectStore& objects,
                       TokenService& tokens)
    : config_(std::move(config)),
      index_(index),
      objects_(objects),
      tokens_(tokens),
      xorb_cache_(index, config_.xorb_cache_bytes) {
  if (!config_.now_ms) config_.now_ms = SystemNowMs;
}

void HubService::SetPublicUrl(std::string url) {
  std::lock_guard lock(public_url_mu_);
  config_.public_url = std::move(url);
}

std::string HubService::PublicUrl() const {
  std::lock_guard lock(public_url_mu_);
  return config_.public_url;
}

int64_t HubService::NowMs() const { return config_.now_ms(); }

Result<BucketRecord> HubService::ReadableBucket(const BucketCaller& caller,
                                                const RouteParams& params) {
  const std::string& ns = params.at("ns");
  const std::string& name = params.at("name");
  XET_RETURN_IF_ERROR(ValidateNames(ns, name));
  XET_ASSIGN_OR_RETURN(auto bucket, index_.GetBucket(ns, name));
  if (!bucket || !CanReadBucket(caller, *bucket)) return BucketNotVisible(caller, ns + "/" + name);
  return std::move(*bucket);
}

Result<BucketRecord> HubService::WritableBucket(const BucketCaller& caller,
                                                const RouteParams& params) {
  const std::string& ns = params.at("ns");
  const std::string& name = params.at("name");
  XET_RETURN_IF_ERROR(ValidateNames(ns, name));
  XET_RETURN_IF_ERROR(CheckBucketWrite(caller, ns + "/" + name));
  XET_ASSIGN_OR_RETURN(auto bucket, index_.GetBucket(ns, name));
  if (!bucket) return Status::NotFound("bucket " + ns + "/" + name + " not found");
  return std::move(*bucket);
}

std::optional<HttpResponse> HubService::CheckBucketWriter(const HttpRequest& head,
                                                          const RouteParams& params) {
  auto caller = IdentifyBucketCaller(tokens_, head);
  if (!caller.ok()) return ErrorResponse(caller.status());
  const std::string& ns = params.at("ns");
  const std::string& name = params.at("name");
  if (Status st = ValidateNames(ns, name); !st.ok()) return ErrorResponse(st);
  if (Status st = CheckBucketWrite(*caller, ns + "/" + name); !st.ok()) return ErrorResponse(st);
  return std::nullopt;
}

std::optional<HttpResponse> HubService::CheckWriter(const HttpRequest& head, const RouteParams&) {
  auto caller = IdentifyBucketCaller(tokens_, head);
  if (!caller.ok()) return ErrorResponse(caller.status());
  if (caller->anonymous()) {
    return ErrorResponse(Status::Unauthenticated("this request needs a token with write access"));
  }
  if (Status st = RequirePermission(*caller->principal, Permission::kWrite); !st.ok()) {
    return ErrorResponse(st);
  }
  return std::nullopt;
}

std::optional<HttpResponse> HubService::CheckBucketReader(const HttpRequest& head,
                                                          const RouteParams& params) {
  auto caller = IdentifyBucketCaller(tokens_, head);
  if (!caller.ok()) return ErrorResponse(caller.status());
  auto bucket = ReadableBucket(*caller, params);
  if (!bucket.ok()) return BucketErrorResponse(bucket.status());
  return std::nullopt;
}

HttpResponse HubService::CreateBucket(const HttpRequest& req, const RouteParams& params) {
  auto caller = IdentifyBucketCaller(tokens_, req);
  if (!caller.ok()) return ErrorResponse(caller.status());
  const std::string& ns = params.at("ns");
  const std::string& name = params.at("name");
  if (Status st = ValidateNames(ns, name); !st.ok()) return ErrorResponse(st);
  if (ns == kMeNamespace) {
    return HttpResponse::Error(400,
                               "namespace 'me' stands for a user account, which xetstore tokens "
                               "do not have; create NAMESPACE/BUCKET with an explicit namespace");
  }
  const std::string full = ns + "/" + name;
  if (Status st = CheckBucketWrite(*caller, full); !st.ok()) return ErrorResponse(st);
  auto is_private = ParseBucketCreateBody(req.body);
  if (!is_private.ok()) return ErrorResponse(is_private.status());
  auto created = index_.CreateBucket(ns, name, *is_private, NowMs());
  if (!created.ok()) {
    if (created.status().code() == Status::Code::kAlreadyExists) {
      return HttpResponse::Error(409, "bucket " + full + " already exists");
    }
    return ErrorResponse(created.status());
  }
  return HttpResponse::Json(DumpJson(BucketCreatedJson(BucketPageUrl(PublicUrl(), full), full)));
}

HttpResponse HubService::GetBucketInfo(const HttpRequest& req, const RouteParams& params) {
  auto caller = IdentifyBucketCaller(tokens_, req);
  if (!caller.ok()) return ErrorResponse(caller.status());
  auto bucket = ReadableBucket(*caller, params);
  if (!bucket.ok()) return BucketErrorResponse(bucket.status());
  return HttpResponse::Json(DumpJson(BucketInfoJson(*bucket)));
}

HttpResponse HubService::ListBuckets(const HttpRequest& req, const RouteParams& params) {
  auto caller = IdentifyBucketCaller(tokens_, req);
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
      ParsePageLimit(req.QueryParam("limit"), config_.list_default_limit, config_.list_max_limit);
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
    std::string url = PublicUrl() + "/api/buckets/" + ns_param + "?";
    if (!search.empty()) url += "search=" + PercentEncode(search) + "&";
    url += "limit=" + std::to_string(*limit) + "&cursor=" + PercentEncode(after);
    res.headers.Set("Link", NextPageLink(url));
  }
  return res;
}

HttpResponse HubService::DeleteBucket(const HttpRequest& req, const RouteParams& params) {
  auto caller = IdentifyBucketCaller(tokens_, req);
  if (!caller.ok()) return ErrorResponse(caller.status());
  const std::string& ns = params.at("ns");
  const std::string& name = params.at("name");
  if (Status st = ValidateNames(ns, name); !st.ok()) return ErrorResponse(st);
  if (Status st = CheckBucketWrite(*caller, ns + "/" + name); !st.ok()) return ErrorResponse(st);
  if (Status st = index_.DeleteBucket(ns, name); !st.ok()) return BucketErrorResponse(st);
  return HttpResponse::Json("{}");
}

HttpResponse HubService::MoveBucket(const HttpRequest& req, const RouteParams&) {
  auto caller = IdentifyBucketCaller(tokens_, req);
  if (!caller.ok()) return ErrorResponse(caller.status());
  auto move = ParseBucketMoveBody(req.body);
  if (!move.ok()) return ErrorResponse(move.status());
  const std::string to = move->ToId();
  for (const std::string& id : {move->FromId(), to}) {
    if (Status st = CheckBucketWrite(*caller, id); !st.ok()) return ErrorResponse(st);
  }
  Status st =
      index_.MoveBucket(move->from_ns, move->from_name, move->to_ns, move->to_name, NowMs());
  if (st.code() == Status::Code::kAlreadyExists) {
    return HttpResponse::Error(409, "bucket " + to + " already exists");
  }
  if (!st.ok()) return BucketErrorResponse(st);
  return HttpResponse::Json(DumpJson(BucketCreatedJson(BucketPageUrl(PublicUrl(), to), to)));
}

}  // namespace xet
