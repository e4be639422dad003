#include "client/cas/cas_client.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "client/cas/reconstruction_json.h"
#include "client/transport/byteranges.h"
#include "common/huge_pages.h"

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
    std::lock_guard lock(mu_);
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
    std::lock_guard lock(mu_);
    cached_.reset();
  }

 private:
  const TokenFetcher fetch_;
  const int64_t margin_;
  const std::function<int64_t()> now_;
  std::mutex mu_;
  std::optional<XetToken> cached_;  // guarded by mu_
  int64_t fetched_at_ = 0;          // guarded by mu_
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

// Grows `v` to hold `n` bytes without doubling; new memory of many megabytes is advised for
// huge pages before it is first touched.
void ReserveLarge(std::vector<uint8_t>& v, size_t n) {
  if (v.capacity() >= n) return;
  v.reserve(n);
  AdviseHugePages(v.data(), v.capacity());
}

// Delivers the requested ranges of a FetchRanges call from the parts of an answer, in
// request order, holding back parts that arrive early.
class RangeDelivery {
 public:
  RangeDelivery(std::span<const FetchRange> ranges, size_t index_base,
                const std::function<Status(size_t, std::span<const uint8_t>)>& on_range)
      : ranges_(ranges), base_(index_base), on_range_(on_range) {}

  Status OnPart(const ContentRange& part, std::span<const uint8_t> bytes) {
    if (bytes.size() != part.size()) {
      return Status::Corruption("part for bytes " + std::to_string(part.first) + "-" +
                                std::to_string(part.last) + " has " + std::to_string(bytes.size()) +
                                " bytes");
    }
    while (next_ < ranges_.size() && Covers(part, ranges_[next_])) {
      XET_RETURN_IF_ERROR(Deliver(part, bytes));
    }
    // Early (out of order), or coalesced over ranges still to come: keep a copy.
    if (CoversRemaining(part)) held_.push_back({part, {bytes.begin(), bytes.end()}});
    // Held parts may now be next.
    for (bool progress = true; progress && next_ < ranges_.size();) {
      progress = false;
      for (const Held& h : held_) {
        if (Covers(h.range, ranges_[next_])) {
          XET_RETURN_IF_ERROR(Deliver(h.range, h.bytes));
          progress = true;
          break;
        }
      }
    }
    std::erase_if(held_, [&](const Held& h) { return !CoversRemaining(h.range); });
    return Status::Ok();
  }

  // After the answer: every range must have been delivered.
  Status Finish() const {
    if (next_ == ranges_.size()) return Status::Ok();
    return Status::Corruption("the answer has no part for bytes " +
                              std::to_string(ranges_[next_].byte_start) + "-" +
                              std::to_string(ranges_[next_].byte_end));
  }

  bool done() const { return next_ == ranges_.size(); }

 private:
  struct Held {
    ContentRange range;
    std::vector<uint8_t> bytes;
  };

  static bool Covers(const ContentRange& part, const FetchRange& r) {
    return part.first <= r.byte_start && r.byte_end <= part.last;
  }
  bool CoversRemaining(const ContentRange& part) const {
    for (size_t i = next_; i < ranges_.size(); ++i) {
      if (Covers(part, ranges_[i])) return true;
    }
    return false;
  }
  Status Deliver(const ContentRange& part, std::span<const uint8_t> bytes) {
    const FetchRange& r = ranges_[next_];
    const auto slice = bytes.subspan(r.byte_start - part.first, r.byte_end - r.byte_start + 1);
    XET_RETURN_IF_ERROR(on_range_(base_ + next_, slice));
    ++next_;
    return Status::Ok();
  }

  std::span<const FetchRange> ranges_;
  size_t base_;
  const std::function<Status(size_t, std::span<const uint8_t>)>& on_range_;
  size_t next_ = 0;  // survives a restarted transfer: nothing is delivered twice
  std::vector<Held> held_;
};

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
    const Hash& file_hash, std::optional<std::pair<uint64_t, uint64_t>> range) {
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
  XET_ASSIGN_OR_RETURN(auto resp,
                       SendWithToken(http_, tokens_, std::move(req), "/v2/reconstructions/" + hex));
  XET_RETURN_IF_ERROR(StatusFromResponse(resp, "reconstruction of " + hex));
  return ParseReconstructionJson(resp.body);
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
  const std::string what = "GET " + std::string(UrlForMessage(entry.url));
  const auto ranges =
      std::span<const FetchRange>(entry.ranges).subspan(first_range, last_range - first_range + 1);
  uint64_t lowest = UINT64_MAX, highest = 0;
  std::string header = "bytes=";
  for (size_t i = 0; i < ranges.size(); ++i) {
    const FetchRange& r = ranges[i];
    if (r.byte_end < r.byte_start) {
      return Status::InvalidArgument(what + ": range " + std::to_string(first_range + i) +
                                     " ends before it starts");
    }
    lowest = std::min(lowest, r.byte_start);
    highest = std::max(highest, r.byte_end);
    if (i > 0) header += ',';
    header += std::to_string(r.byte_start) + "-" + std::to_string(r.byte_end);
  }
  // No part can be larger than the span of the requested bytes, nor can there be more
  // parts than ranges.
  const uint64_t max_part = highest - lowest + 1;

  RangeDelivery delivery(ranges, first_range, on_range);
  enum class Mode { kUnknown, kMultipart, kSingle, kWhole };
  Mode mode = Mode::kUnknown;
  std::optional<ByteRangesParser> parser;
  ContentRange single;  // kSingle: the answer's Content-Range
  std::vector<uint8_t> own;
  // kSingle / kWhole: the body (kWhole: up to `highest`); kMultipart: lent to the parser.
  std::vector<uint8_t>& buffer = reuse != nullptr ? *reuse : own;
  buffer.clear();
  Status failure;  // why our sink stopped the transfer
  // The parser gives the buffer back on every way out.
  struct GiveBack {
    std::optional<ByteRangesParser>& parser;
    std::vector<uint8_t>& buffer;
    ~GiveBack() {
      if (parser) buffer = parser->TakePartBuffer();
    }
  } give_back{parser, buffer};

  HttpClient::StreamCallbacks cb;
  cb.on_headers = [&](int status, const HeaderList& headers) {
    ClientResponse view;
    view.headers = headers;
    if (parser) {  // a restarted transfer: the parser had the buffer
      buffer = parser->TakePartBuffer();
      parser.reset();
    }
    buffer.clear();
    if (status == 200) {
      mode = Mode::kWhole;
      return;
    }
    if (status != 206) {
      mode = Mode::kUnknown;
      failure = Status::Corruption(what + ": unexpected HTTP " + std::to_string(status));
      return;
    }
    const auto type = view.Header("Content-Type");
    if (type && type->find("multipart/") != std::string_view::npos) {
      auto boundary = MultipartBoundary(*type);
      if (!boundary.ok()) {
        failure = Status::Corruption(what + ": " + boundary.status().message());
        return;
      }
      mode = Mode::kMultipart;
      parser.emplace(*boundary, max_part, ranges.size(), std::move(buffer));
      return;
    }
    const auto content_range = view.Header("Content-Range");
    auto parsed = content_range ? ParseContentRange(*content_range)
                                : Result<ContentRange>(Status::InvalidArgument("missing"));
    if (!parsed.ok()) {
      failure = Status::Corruption(what + ": 206 answer without a valid Content-Range");
      return;
    }
    if (parsed->size() > max_part) {
      failure = Status::Corruption(what + ": answered " + std::to_string(parsed->size()) +
                                   " bytes for " + std::to_string(max_part) + " requested");
      return;
    }
    mode = Mode::kSingle;
    single = *parsed;
    ReserveLarge(buffer, single.size());  // exactly: no doubling past the answer's size
  };
  cb.sink = [&](std::string_view bytes) {
    if (!failure.ok()) return false;
    switch (mode) {
      case Mode::kMultipart: {
        Status delivered;  // on_range's own error, returned as is
        Status st = parser->Feed(bytes, [&](const ContentRange& part, std::span<const uint8_t> b) {
          delivered = delivery.OnPart(part, b);
          return delivered;
        });
        if (!delivered.ok()) {
          failure = delivered;
        } else if (!st.ok()) {
          failure = st.WithContext(what);
        }
        return failure.ok();
      }
      case Mode::kSingle:
        if (buffer.size() + bytes.size() > single.size()) {
          failure =
              Status::Corruption(what + ": body longer than its Content-Range " +
                                 std::to_string(single.first) + "-" + std::to_string(single.last));
          return false;
        }
        buffer.insert(buffer.end(), bytes.begin(), bytes.end());
        return true;
      case Mode::kWhole: {
        // Keep bytes [0, highest]; the rest of the object is not needed.
        const uint64_t keep = highest + 1;
        if (buffer.size() < keep) {
          const size_t n =
              static_cast<size_t>(std::min<uint64_t>(bytes.size(), keep - buffer.size()));
          buffer.insert(buffer.end(), bytes.begin(),
                        bytes.begin() + static_cast<std::ptrdiff_t>(n));
        }
        return true;
      }
      case Mode::kUnknown:
        break;
    }
    failure = Status::Corruption(what + ": body of an unusable answer");
    return false;
  };
  cb.on_restart = [&] {
    if (parser) parser->Reset();
    buffer.clear();
  };

  ClientRequest req;
  req.url = entry.url;
  req.headers.emplace_back("Range", header);
  auto resp = http_.Stream(req, cb);
  if (!failure.ok()) return failure;
  if (!resp.ok()) return resp.status();
  XET_RETURN_IF_ERROR(StatusFromResponse(*resp, what));
  switch (mode) {
    case Mode::kMultipart:
      XET_RETURN_IF_ERROR(parser->Finish().WithContext(what));
      break;
    case Mode::kSingle:
      if (buffer.size() != single.size()) {
        return Status::Corruption(what + ": body of " + std::to_string(buffer.size()) +
                                  " bytes for Content-Range " + std::to_string(single.first) + "-" +
                                  std::to_string(single.last));
      }
      XET_RETURN_IF_ERROR(delivery.OnPart(single, buffer));
      break;
    case Mode::kWhole:
      if (!buffer.empty()) {
        XET_RETURN_IF_ERROR(
            delivery.OnPart(ContentRange{0, buffer.size() - 1, std::nullopt}, buffer));
      }
      break;
    case Mode::kUnknown:
      return Status::Corruption(what + ": unusable answer (HTTP " + std::to_string(resp->status) +
                                ")");
  }
  return delivery.Finish().WithContext(what);
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
