#include "client/cas/cas_client.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "client/cas/range_answer_reader.h"
#include "client/cas/reconstruction_json.h"
#include "client/transport/byteranges.h"
#include "common/mutex.h"

namespace xet {
namespace {

using nlohmann::json;

int64_t SystemUnixSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class CachingTokenSource final : public CasTokenSource {
 public:
  CachingTokenSource(TokenFetcher fetch, int64_t margin, std::function<int64_t()> now)
      : fetch_(std::move(fetch)), margin_(margin), now_(now ? std::move(now) : SystemUnixSeconds) {}

  Result<XetToken> Token() override {
    MutexLock lock(mu_);
    const int64_t now = now_();
    if (cached_) {
      const int64_t lifetime = cached_->expires_at - fetched_at_;
      const int64_t margin = std::clamp<int64_t>(lifetime / 2, 0, std::max<int64_t>(margin_, 0));
      if (now + margin < cached_->expires_at) return *cached_;
    }
    XET_ASSIGN_OR_RETURN(XetToken fresh, fetch_());
    cached_ = fresh;
    fetched_at_ = now;
    return fresh;
  }

  void Invalidate() override {
    MutexLock lock(mu_);
    cached_.reset();
  }

 private:
  const TokenFetcher fetch_;
  const int64_t margin_;
  const std::function<int64_t()> now_;
  Mutex mu_;
  std::optional<XetToken> cached_ GUARDED_BY(mu_);
  int64_t fetched_at_ GUARDED_BY(mu_) = 0;
};

class StaticTokenSource final : public CasTokenSource {
 public:
  explicit StaticTokenSource(XetToken token) : token_(std::move(token)) {
    while (!token_.cas_url.empty() && token_.cas_url.back() == '/') token_.cas_url.pop_back();
  }
  Result<XetToken> Token() override { return token_; }
  void Invalidate() override {}

 private:
  XetToken token_;
};

std::span<const uint8_t> AsBytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::string_view UrlForMessage(std::string_view url) { return url.substr(0, url.find('?')); }

// Sends `req` (its url a path on the CAS) with the current token; a 401 invalidates the
// token and retries once with a fresh one.
Result<ClientResponse> SendWithToken(HttpClient& http, CasTokenSource& tokens, ClientRequest req,
                                     const std::string& path) {
  req.headers.emplace_back();  // the Authorization slot
  for (int attempt = 0;; ++attempt) {
    XET_ASSIGN_OR_RETURN(XetToken token, tokens.Token());
    req.url = token.cas_url + path;
    req.headers.back() = {"Authorization", "Bearer " + token.access_token};
    XET_ASSIGN_OR_RETURN(ClientResponse resp, http.Send(req));
    if (resp.status == 401 && attempt == 0) {
      tokens.Invalidate();
      continue;
    }
    return resp;
  }
}

// Reads one field of a small JSON answer.
template <typename T>
Result<T> AnswerField(const std::string& body, const char* field, std::string_view what) {
  const json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object()) {
    const auto it = j.find(field);
    if constexpr (std::is_same_v<T, bool>) {
      if (it != j.end() && it->is_boolean()) return it->template get<bool>();
    } else {
      if (it != j.end() && it->is_number_unsigned()) return it->template get<T>();
    }
  }
  return Status::Corruption(std::string(what) + ": the answer has no valid \"" + field + "\"");
}

}  // namespace

std::unique_ptr<CasTokenSource> MakeCachingTokenSource(TokenFetcher fetch, int64_t refresh_margin_s,
                                                       std::function<int64_t()> now) {
  return std::make_unique<CachingTokenSource>(std::move(fetch), refresh_margin_s, std::move(now));
}

std::unique_ptr<CasTokenSource> MakeHubTokenSource(HubClient& hub, std::string bucket_id,
                                                   bool write, int64_t refresh_margin_s) {
  return MakeCachingTokenSource(
      [&hub, id = std::move(bucket_id), write] { return hub.GetXetToken(id, write); },
      refresh_margin_s);
}

std::unique_ptr<CasTokenSource> MakeStaticTokenSource(XetToken token) {
  return std::make_unique<StaticTokenSource>(std::move(token));
}

CasClient::CasClient(HttpClient& http, CasTokenSource& tokens) : http_(http), tokens_(tokens) {}

Result<bool> CasClient::UploadXorb(const Hash& xorb_hash, std::span<const uint8_t> serialized) {
  const std::string hex = xorb_hash.ToHex();
  ClientRequest req;
  req.method = "POST";
  req.headers.emplace_back("Content-Type", "application/octet-stream");
  req.body = serialized;
  XET_ASSIGN_OR_RETURN(auto resp, SendWithToken(http_, tokens_, req, "/v1/xorbs/default/" + hex));
  const std::string what = "upload xorb " + hex;
  XET_RETURN_IF_ERROR(StatusFromResponse(resp, what));
  return AnswerField<bool>(resp.body, "was_inserted", what);
}

Result<bool> CasClient::XorbExists(const Hash& xorb_hash) {
  const std::string hex = xorb_hash.ToHex();
  ClientRequest req;
  req.method = "HEAD";
  XET_ASSIGN_OR_RETURN(auto resp, SendWithToken(http_, tokens_, req, "/v1/xorbs/default/" + hex));
  if (resp.status == 404) return false;
  XET_RETURN_IF_ERROR(StatusFromResponse(resp, "looking up xorb " + hex));
  return true;
}

Result<bool> CasClient::UploadShard(std::span<const uint8_t> shard) {
  ClientRequest req;
  req.method = "POST";
  req.headers.emplace_back("Content-Type", "application/octet-stream");
  req.body = shard;
  XET_ASSIGN_OR_RETURN(auto resp, SendWithToken(http_, tokens_, req, "/v1/shards"));
  XET_RETURN_IF_ERROR(StatusFromResponse(resp, "upload shard"));
  XET_ASSIGN_OR_RETURN(uint64_t result, AnswerField<uint64_t>(resp.body, "result", "upload shard"));
  return result != 0;  // 0: the shard was known already, 1: registered now
}

Result<std::optional<std::vector<uint8_t>>> CasClient::QueryChunk(const Hash& chunk_hash) {
  const std::string hex = chunk_hash.ToHex();
  XET_ASSIGN_OR_RETURN(auto resp, SendWithToken(http_, tokens_, ClientRequest{},
                                                "/v1/chunks/default-merkledb/" + hex));
  if (resp.status == 404) return std::optional<std::vector<uint8_t>>();
  XET_RETURN_IF_ERROR(StatusFromResponse(resp, "dedup query for chunk " + hex));
  const auto bytes = AsBytes(resp.body);
  return std::optional<std::vector<uint8_t>>(std::vector<uint8_t>(bytes.begin(), bytes.end()));
}

Result<Reconstruction> CasClient::GetReconstruction(
    const Hash& file_hash, std::optional<std::pair<uint64_t, uint64_t>> range, bool chunk_detail) {
  const std::string hex = file_hash.ToHex();
  ClientRequest req;
  req.headers.emplace_back("Accept", "application/json");
  if (range) {
    if (range->second < range->first) {
      return Status::InvalidArgument("reconstruction of " + hex +
                                     ": byte range ends before it starts");
    }
    req.headers.emplace_back(
        "Range", "bytes=" + std::to_string(range->first) + "-" + std::to_string(range->second));
  }
  XET_ASSIGN_OR_RETURN(auto resp, SendWithToken(http_, tokens_, std::move(req),
                                                "/v2/reconstructions/" + hex +
                                                    (chunk_detail ? "?chunk_detail=1" : "")));
  XET_RETURN_IF_ERROR(StatusFromResponse(resp, "reconstruction of " + hex));
  return ParseReconstructionJson(resp.body);
}

Result<FileChunkHashesAnswer> CasClient::GetFileChunkHashes(const Hash& file_hash,
                                                            uint64_t file_size,
                                                            std::span<const ByteRange> dirty) {
  const std::string hex = file_hash.ToHex();
  if (dirty.empty()) return Status::InvalidArgument("file chunk hashes of " + hex + ": no range");
  ClientRequest req;
  req.headers.emplace_back("Accept", "application/json");
  std::string ranges = "bytes=";
  AppendByteRangeList(dirty, ",", &ranges);
  req.headers.emplace_back("X-Range-Dirty", std::move(ranges));
  XET_ASSIGN_OR_RETURN(
      auto resp, SendWithToken(http_, tokens_, std::move(req), "/v2/file-chunk-hashes/" + hex));
  XET_RETURN_IF_ERROR(StatusFromResponse(resp, "file chunk hashes of " + hex));
  return ParseFileChunkHashesJson(resp.body, file_size);
}

Status CasClient::FetchRanges(
    const FetchEntry& entry, size_t first_range, size_t last_range,
    const std::function<Status(size_t, std::span<const uint8_t>)>& on_range,
    std::vector<uint8_t>* reuse) {
  if (first_range > last_range || last_range >= entry.ranges.size()) {
    return Status::InvalidArgument("FetchRanges: ranges " + std::to_string(first_range) + ".." +
                                   std::to_string(last_range) + " of " +
                                   std::to_string(entry.ranges.size()));
  }
  std::string what = "GET " + std::string(UrlForMessage(entry.url));
  const auto ranges =
      std::span<const FetchRange>(entry.ranges).subspan(first_range, last_range - first_range + 1);
  XET_ASSIGN_OR_RETURN(std::string header, RangeRequestHeader(ranges, first_range, what));
  std::vector<uint8_t> own;
  RangeAnswerReader reader(ranges, first_range, on_range, std::move(what),
                           reuse != nullptr ? *reuse : own);
  HttpClient::StreamCallbacks cb;
  cb.on_headers = [&](int status, const HeaderList& headers) { reader.OnHeaders(status, headers); };
  cb.sink = [&](std::string_view bytes) { return reader.OnBody(bytes); };
  cb.on_restart = [&] { reader.OnRestart(); };
  ClientRequest req;
  req.url = entry.url;
  req.headers.emplace_back("Range", std::move(header));
  return reader.Finish(http_.Stream(req, cb));
}

Status CasClient::StreamRange(const FetchEntry& entry, size_t range,
                              const std::function<Status(std::span<const uint8_t>)>& on_bytes) {
  if (range >= entry.ranges.size()) {
    return Status::InvalidArgument("StreamRange: range " + std::to_string(range) + " of " +
                                   std::to_string(entry.ranges.size()));
  }
  const FetchRange& r = entry.ranges[range];
  const std::string what = "GET " + std::string(UrlForMessage(entry.url));
  if (r.byte_end < r.byte_start) return Status::InvalidArgument(what + ": empty range");
  const uint64_t want = r.byte_end - r.byte_start + 1;
  uint64_t body_first = 0;  // object offset of the body's first byte
  uint64_t body_end = 0;    // one past the body's last byte (206: its Content-Range)
  uint64_t received = 0;    // body bytes of the current attempt
  uint64_t delivered = 0;   // range bytes handed to on_bytes, across attempts
  bool usable = false;
  Status failure;

  HttpClient::StreamCallbacks cb;
  cb.on_headers = [&](int status, const HeaderList& headers) {
    ClientResponse view;
    view.headers = headers;
    received = 0;
    usable = false;
    if (status == 200) {
      body_first = 0;
      body_end = UINT64_MAX;
      usable = true;
      return;
    }
    if (status != 206) {
      failure = Status::Corruption(what + ": unexpected HTTP " + std::to_string(status));
      return;
    }
    const auto content_range = view.Header("Content-Range");
    auto parsed = content_range ? ParseContentRange(*content_range)
                                : Result<ContentRange>(Status::InvalidArgument("missing"));
    if (!parsed.ok() || parsed->first > r.byte_start || parsed->last < r.byte_end) {
      failure = Status::Corruption(what + ": 206 answer without a Content-Range covering bytes " +
                                   std::to_string(r.byte_start) + "-" + std::to_string(r.byte_end));
      return;
    }
    body_first = parsed->first;
    body_end = parsed->last + 1;
    usable = true;
  };
  cb.sink = [&](std::string_view bytes) {
    if (!failure.ok()) return false;
    if (!usable) {
      failure = Status::Corruption(what + ": body of an unusable answer");
      return false;
    }
    const uint64_t at = body_first + received;  // object offset of bytes[0]
    if (bytes.size() > body_end - at) {
      failure = Status::Corruption(what + ": body longer than its Content-Range");
      return false;
    }
    received += bytes.size();
    // The next byte to deliver is r.byte_start + delivered.
    const uint64_t next = r.byte_start + delivered;
    const uint64_t lo = std::max(at, next);
    const uint64_t hi = std::min(at + bytes.size(), r.byte_end + 1);
    if (lo < hi) {
      const auto* base = reinterpret_cast<const uint8_t*>(bytes.data());
      Status st = on_bytes(std::span<const uint8_t>(base + (lo - at), hi - lo));
      if (!st.ok()) {
        failure = std::move(st);
        return false;
      }
      delivered += hi - lo;
    }
    return true;
  };
  cb.on_restart = [&] { received = 0; };

  ClientRequest req;
  req.url = entry.url;
  req.headers.emplace_back("Range", "bytes=" + std::to_string(r.byte_start + delivered) + "-" +
                                        std::to_string(r.byte_end));
  auto resp = http_.Stream(req, cb);
  if (!failure.ok()) return failure;
  if (!resp.ok()) return resp.status();
  XET_RETURN_IF_ERROR(StatusFromResponse(*resp, what));
  if (delivered != want) {
    return Status::Corruption(what + ": the answer ended after " + std::to_string(delivered) +
                              " of the " + std::to_string(want) + " bytes of range " +
                              std::to_string(r.byte_start) + "-" + std::to_string(r.byte_end));
  }
  return Status::Ok();
}

}  // namespace xet
