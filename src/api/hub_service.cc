#include "api/hub_service.h"

#include <chrono>
#include <nlohmann/json.hpp>

#include "api/batch_request.h"
#include "api/bucket_json.h"
#include "api/bucket_path.h"
#include "api/http_status.h"
#include "api/hub_query.h"
#include "api/hub_urls.h"

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

// The optional JSON object body of a create request ({} when empty).
Result<bool> ParseCreateBody(const std::string& body) {
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) return true;
  const json j = json::parse(body, nullptr, false);
  if (!j.is_object()) return Status::InvalidArgument("body must be a JSON object");
  std::optional<bool> is_private;
  if (auto it = j.find("private"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean()) return Status::InvalidArgument("\"private\" must be true or false");
    is_private = it->get<bool>();
  }
  if (auto it = j.find("visibility"); it != j.end() && !it->is_null()) {
    if (!it->is_string() || (*it != "private" && *it != "public")) {
      return Status::InvalidArgument("\"visibility\" must be \"private\" or \"public\"");
    }
    const bool v = *it == "private";
    if (is_private && *is_private != v) {
      return Status::InvalidArgument("\"private\" and \"visibility\" disagree");
    }
    is_private = v;
  }
  for (const char* field : {"resourceGroupId", "region"}) {
    if (auto it = j.find(field); it != j.end() && !it->is_null() && !it->is_string()) {
      return Status::InvalidArgument(std::string("\"") + field + "\" must be a string");
    }
  }
  return is_private.value_or(true);  // S3-like: private unless asked otherwise
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
  auto is_private = ParseCreateBody(req.body);
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
  const json j = json::parse(req.body, nullptr, false);
  if (!j.is_object()) return HttpResponse::Error(400, "body must be a JSON object");
  std::string ids[2];
  const char* fields[2] = {"fromRepo", "toRepo"};
  for (int i = 0; i < 2; ++i) {
    const auto it = j.find(fields[i]);
    if (it == j.end() || !it->is_string()) {
      return HttpResponse::Error(400,
                                 std::string("\"") + fields[i] + "\" must be NAMESPACE/BUCKET");
    }
    ids[i] = it->get<std::string>();
    if (Status st = ValidateBucketFullName(ids[i]); !st.ok()) {
      return ErrorResponse(st.WithContext(fields[i]));
    }
  }
  const auto type = j.find("type");
  if (type == j.end() || *type != "bucket") {
    return HttpResponse::Error(400, "only buckets can be moved here: \"type\" must be \"bucket\"");
  }
  for (const std::string& id : ids) {
    if (Status st = CheckBucketWrite(*caller, id); !st.ok()) return ErrorResponse(st);
  }
  const size_t a = ids[0].find('/'), b = ids[1].find('/');
  Status st = index_.MoveBucket(ids[0].substr(0, a), ids[0].substr(a + 1), ids[1].substr(0, b),
                                ids[1].substr(b + 1), NowMs());
  if (st.code() == Status::Code::kAlreadyExists) {
    return HttpResponse::Error(409, "bucket " + ids[1] + " already exists");
  }
  if (!st.ok()) return BucketErrorResponse(st);
  return HttpResponse::Json(
      DumpJson(BucketCreatedJson(BucketPageUrl(PublicUrl(), ids[1]), ids[1])));
}

}  // namespace xet
