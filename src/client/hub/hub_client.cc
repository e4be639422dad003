#include "client/hub/hub_client.h"

#include <future>
#include <nlohmann/json.hpp>

#include "client/hub/wire.h"
#include "common/percent_encode.h"
#include "protocol/bucket_path.h"

namespace xet {
namespace {

using nlohmann::json;

constexpr size_t kPathsPerRequest = 1000;
constexpr size_t kOpsPerBatch = 10000;

std::span<const uint8_t> AsBytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// "NAMESPACE/BUCKET", both parts valid names (so the id needs no URL encoding and cannot
// smuggle path segments).
Status ValidateBucketId(std::string_view id) {
  const size_t slash = id.find('/');
  if (slash == std::string_view::npos) {
    return Status::InvalidArgument("bucket '" + std::string(id.substr(0, 200)) +
                                   "' must be named NAMESPACE/BUCKET");
  }
  XET_RETURN_IF_ERROR(ValidateBucketName(id.substr(0, slash), "namespace"));
  return ValidateBucketName(id.substr(slash + 1), "bucket name");
}

struct Call {
  HttpClient& http;
  const std::string& token;

  Result<ClientResponse> operator()(std::string method, std::string url, std::string_view body = {},
                                    const char* content_type = nullptr) const {
    ClientRequest req;
    req.method = std::move(method);
    req.url = std::move(url);
    if (!token.empty()) req.headers.emplace_back("Authorization", "Bearer " + token);
    req.headers.emplace_back("Accept", "application/json");
    if (content_type != nullptr) req.headers.emplace_back("Content-Type", content_type);
    req.body = AsBytes(body);
    return http.Send(req);
  }
};

// The URL of a next page, on our endpoint: a link on the endpoint is used as is; another
// origin (a server whose public URL differs from the address we use) is re-based on the
// endpoint from its "/api/" path, so the token is only ever sent to the endpoint.
Result<std::string> NextPage(const std::string& endpoint, const ClientResponse& resp) {
  const auto link = resp.Header("Link");
  if (!link) return std::string();
  auto next = NextLinkUrl(*link);
  if (!next) return std::string();
  if (next->starts_with(endpoint + "/")) return std::move(*next);
  const size_t scheme = next->find("://");
  const size_t api = next->find("/api/", scheme == std::string::npos ? 0 : scheme + 3);
  if (api == std::string::npos) {
    return Status::Corruption("next-page link outside the API: " + next->substr(0, 200));
  }
  return endpoint + next->substr(api);
}

// Follows rel="next" links from `url`, handing each page's body to `on_page` (which returns
// false to stop). The next page is requested on a helper thread while `on_page` handles the
// current one, so a listing of many pages takes about the longer of the server's and the
// parser's time per page rather than their sum; at most two pages are held at once, and a
// stop or an error leaves at most one page fetched for nothing.
Status Paginate(const Call& call, const std::string& endpoint, std::string url,
                std::string_view what,
                const std::function<Result<bool>(const std::string& body)>& on_page) {
  if (url.empty()) return Status::Ok();
  XET_ASSIGN_OR_RETURN(ClientResponse resp, call("GET", url));
  for (;;) {
    XET_RETURN_IF_ERROR(StatusFromResponse(resp, what));
    Result<std::string> next = NextPage(endpoint, resp);
    if (next.ok() && *next == url) {
      next = Status::Corruption(std::string(what) + ": next page link loops");
    }
    std::future<Result<ClientResponse>> ahead;  // its destructor waits for the request
    if (next.ok() && !next->empty()) {
      ahead = std::async(std::launch::async, [&call, u = *next] { return call("GET", u); });
    }
    XET_ASSIGN_OR_RETURN(bool more, on_page(resp.body));
    if (!more) return Status::Ok();
    XET_RETURN_IF_ERROR(next.status());       // a bad link fails after the page it came with
    if (!ahead.valid()) return Status::Ok();  // the last page
    XET_ASSIGN_OR_RETURN(resp, ahead.get());
    url = std::move(*next);
  }
}

}  // namespace

HubClient::HubClient(HttpClient& http, std::string endpoint, std::string token)
    : http_(http), endpoint_(std::move(endpoint)), token_(std::move(token)) {
  while (!endpoint_.empty() && endpoint_.back() == '/') endpoint_.pop_back();
}

Result<RemoteBucket> HubClient::CreateBucket(const std::string& bucket_id, bool is_private) {
  XET_RETURN_IF_ERROR(ValidateBucketId(bucket_id));
  const std::string body = json{{"private", is_private}}.dump();
  XET_ASSIGN_OR_RETURN(auto resp,
                       (Call{http_, token_})("POST", endpoint_ + "/api/buckets/" + bucket_id, body,
                                             "application/json"));
  XET_RETURN_IF_ERROR(StatusFromResponse(resp, "create bucket " + bucket_id));
  RemoteBucket b;
  b.id = bucket_id;
  b.is_private = is_private;
  return b;
}

Result<RemoteBucket> HubClient::GetBucket(const std::string& bucket_id) {
  XET_RETURN_IF_ERROR(ValidateBucketId(bucket_id));
  XET_ASSIGN_OR_RETURN(auto resp,
                       (Call{http_, token_})("GET", endpoint_ + "/api/buckets/" + bucket_id));
  XET_RETURN_IF_ERROR(StatusFromResponse(resp, "bucket " + bucket_id));
  return ParseBucketJson(resp.body);
}

Result<std::vector<RemoteBucket>> HubClient::ListBuckets(const std::string& ns) {
  XET_RETURN_IF_ERROR(ValidateBucketName(ns, "namespace"));
  std::vector<RemoteBucket> out;
  XET_RETURN_IF_ERROR(Paginate(Call{http_, token_}, endpoint_, endpoint_ + "/api/buckets/" + ns,
                               "list buckets of " + ns,
                               [&](const std::string& body) -> Result<bool> {
                                 XET_ASSIGN_OR_RETURN(auto page, ParseBucketListJson(body));
                                 for (auto& b : page) out.push_back(std::move(b));
                                 return true;
                               }));
  return out;
}

Status HubClient::DeleteBucket(const std::string& bucket_id) {
  XET_RETURN_IF_ERROR(ValidateBucketId(bucket_id));
  XET_ASSIGN_OR_RETURN(auto resp,
                       (Call{http_, token_})("DELETE", endpoint_ + "/api/buckets/" + bucket_id));
  return StatusFromResponse(resp, "delete bucket " + bucket_id);
}

Status HubClient::MoveBucket(const std::string& from_id, const std::string& to_id) {
  XET_RETURN_IF_ERROR(ValidateBucketId(from_id));
  XET_RETURN_IF_ERROR(ValidateBucketId(to_id));
  const std::string body =
      json{{"fromRepo", from_id}, {"toRepo", to_id}, {"type", "bucket"}}.dump();
  XET_ASSIGN_OR_RETURN(auto resp, (Call{http_, token_})("POST", endpoint_ + "/api/repos/move", body,
                                                        "application/json"));
  return StatusFromResponse(resp, "move bucket " + from_id + " to " + to_id);
}

Result<XetToken> HubClient::GetXetToken(const std::string& bucket_id, bool write) {
  XET_RETURN_IF_ERROR(ValidateBucketId(bucket_id));
  const std::string url =
      endpoint_ + "/api/buckets/" + bucket_id + (write ? "/xet-write-token" : "/xet-read-token");
  XET_ASSIGN_OR_RETURN(auto resp, (Call{http_, token_})("GET", url));
  XET_RETURN_IF_ERROR(StatusFromResponse(
      resp, std::string(write ? "write" : "read") + " token for bucket " + bucket_id));
  return ParseXetTokenJson(resp.body);
}

Status HubClient::ListTree(const std::string& bucket_id, const std::string& prefix, bool recursive,
                           const std::function<bool(const RemoteEntry&)>& on_item,
                           size_t page_limit) {
  XET_RETURN_IF_ERROR(ValidateBucketId(bucket_id));
  XET_ASSIGN_OR_RETURN(std::string p, NormalizeBucketPrefix(prefix));
  std::string url = endpoint_ + "/api/buckets/" + bucket_id + "/tree";
  if (!p.empty()) url += "/" + PercentEncode(p, /*keep_slash=*/true);
  url += recursive ? "?recursive=true" : "?recursive=false";
  if (page_limit > 0) url += "&limit=" + std::to_string(page_limit);
  return Paginate(Call{http_, token_}, endpoint_, std::move(url), "list " + bucket_id,
                  [&](const std::string& body) -> Result<bool> {
                    XET_ASSIGN_OR_RETURN(auto page, ParseEntryListJson(body));
                    for (const RemoteEntry& e : page) {
                      if (!on_item(e)) return false;
                    }
                    return true;
                  });
}

Result<std::vector<RemoteEntry>> HubClient::PathsInfo(const std::string& bucket_id,
                                                      std::span<const std::string> paths) {
  XET_RETURN_IF_ERROR(ValidateBucketId(bucket_id));
  for (const std::string& p : paths) {
    if (Status st = ValidateBucketPath(p); !st.ok()) {
      return st.WithContext("paths-info '" + p.substr(0, 200) + "'");
    }
  }
  std::vector<RemoteEntry> out;
  const Call call{http_, token_};
  for (size_t begin = 0; begin < paths.size(); begin += kPathsPerRequest) {
    const auto chunk = paths.subspan(begin, std::min(kPathsPerRequest, paths.size() - begin));
    const std::string body =
        json{{"paths", std::vector<std::string>(chunk.begin(), chunk.end())}}.dump();
    XET_ASSIGN_OR_RETURN(auto resp,
                         call("POST", endpoint_ + "/api/buckets/" + bucket_id + "/paths-info", body,
                              "application/json"));
    XET_RETURN_IF_ERROR(StatusFromResponse(resp, "paths-info in " + bucket_id));
    XET_ASSIGN_OR_RETURN(auto page, ParseEntryListJson(resp.body));
    for (auto& e : page) out.push_back(std::move(e));
  }
  return out;
}

Result<BatchOutcome> HubClient::Batch(const std::string& bucket_id, std::span<const RemoteOp> ops) {
  XET_RETURN_IF_ERROR(ValidateBucketId(bucket_id));
  BatchOutcome total;
  const Call call{http_, token_};
  for (size_t begin = 0; begin < ops.size(); begin += kOpsPerBatch) {
    const auto chunk = ops.subspan(begin, std::min(kOpsPerBatch, ops.size() - begin));
    XET_ASSIGN_OR_RETURN(std::string body, SerializeBatchOps(chunk, bucket_id));
    XET_ASSIGN_OR_RETURN(auto resp, call("POST", endpoint_ + "/api/buckets/" + bucket_id + "/batch",
                                         body, "application/x-ndjson"));
    // 422: some operations failed; the answer lists them.
    if (resp.status != 422) XET_RETURN_IF_ERROR(StatusFromResponse(resp, "batch on " + bucket_id));
    XET_ASSIGN_OR_RETURN(auto outcome, ParseBatchOutcomeJson(resp.body));
    total.processed += outcome.processed;
    total.succeeded += outcome.succeeded;
    for (auto& f : outcome.failed) total.failed.push_back(std::move(f));
  }
  return total;
}

}  // namespace xet
