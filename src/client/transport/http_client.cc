#include "client/transport/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "common/ascii.h"
#include "common/mutex.h"

namespace xet {
namespace {

// libcurl's process-wide initialization, done once (a function-local static: thread-safe
// initialization, no global mutable state of ours). Never cleaned up: other libraries in the
// process may still use libcurl at exit.
bool CurlGlobalInit() {
  static const bool ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  return ok;
}

struct CurlDeleter {
  void operator()(CURL* h) const { curl_easy_cleanup(h); }
};
using CurlPtr = std::unique_ptr<CURL, CurlDeleter>;

struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using SlistPtr = std::unique_ptr<curl_slist, SlistDeleter>;

// Idle handles kept for reuse; more concurrent requests than this still work, their
// handles are just not kept afterwards.
constexpr size_t kMaxIdleHandles = 64;
constexpr long kReceiveBufferBytes = 256 << 10;
constexpr long kSendBufferBytes = 256 << 10;
// Longest Retry-After honoured (the policy's max_delay caps it further).
constexpr int64_t kMaxRetryAfterSeconds = 3600;

// The URL without its query: signed query strings stay out of error messages and logs.
std::string_view UrlForMessage(std::string_view url) { return url.substr(0, url.find('?')); }

// `text` made safe for a one-line message: at most `max` bytes, control bytes as ' '.
std::string OneLine(std::string_view text, size_t max) {
  std::string out;
  const size_t n = std::min(text.size(), max);
  out.reserve(n + 3);
  for (size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    out += (c < 0x20 || c == 0x7F) ? ' ' : static_cast<char>(c);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (text.size() > n) out += "...";
  return out;
}

bool IsRetryableCurlCode(CURLcode rc) {
  switch (rc) {
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_AGAIN:
      return true;
    default:
      return false;
  }
}

bool HasLineBreakOrNul(std::string_view s) {
  return s.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
}

// Retry-After in delta-seconds form (the HTTP-date form is ignored: 0).
std::chrono::milliseconds ParseRetryAfter(std::optional<std::string_view> value) {
  if (!value) return {};
  std::string_view v = *value;
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  int64_t seconds = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), seconds);
  if (ec != std::errc() || end != v.data() + v.size() || seconds < 0) return {};
  return std::chrono::seconds(std::min(seconds, kMaxRetryAfterSeconds));
}

// The state of one attempt, shared with libcurl's callbacks.
struct Transfer {
  CURL* handle = nullptr;
  const HttpClient::StreamCallbacks* stream = nullptr;  // null for Send
  uint64_t max_body = 0;
  ClientResponse response;
  bool decided = false;    // the status is known and streaming chosen (or not)
  bool streaming = false;  // the body goes to stream->sink
  bool delivered = false;  // the sink got at least one byte
  bool cancelled = false;  // the sink returned false
  bool too_large = false;  // the buffered body hit max_body
  bool callback_threw = false;

  // Called once the status line and headers are complete (first body byte, or the end of
  // a body-less answer).
  void Decide() {
    if (decided) return;
    decided = true;
    long code = 0;
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &code);
    response.status = static_cast<int>(code);
    streaming = stream != nullptr && code >= 200 && code < 300;
    if (streaming && stream->on_headers) stream->on_headers(response.status, response.headers);
    if (!streaming) {
      curl_off_t length = -1;
      curl_easy_getinfo(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
      if (length > 0) {
        response.body.reserve(
            static_cast<size_t>(std::min<uint64_t>(static_cast<uint64_t>(length), max_body)));
      }
    }
  }
};

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t total = size * n;
  try {
    std::string_view line(data, total);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
    if (line.starts_with("HTTP/")) {
      t->response.headers.clear();  // a new response (after 100 Continue, say)
      return total;
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) return total;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    t->response.headers.emplace_back(std::string(line.substr(0, colon)), std::string(value));
    return total;
  } catch (...) {
    t->callback_threw = true;
    return 0;
  }
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t total = size * n;
  try {
    t->Decide();
    if (t->streaming) {
      if (total == 0) return 0;
      t->delivered = true;
      if (!t->stream->sink(std::string_view(data, total))) {
        t->cancelled = true;
        return 0;
      }
      return total;
    }
    if (t->response.body.size() + total > t->max_body) {
      t->too_large = true;
      return 0;
    }
    t->response.body.append(data, total);
    return total;
  } catch (...) {
    t->callback_threw = true;
    return 0;
  }
}

}  // namespace

std::optional<std::string_view> ClientResponse::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (EqualsIgnoreAsciiCase(k, name)) return std::string_view(v);
  }
  return std::nullopt;
}

// DNS answers and TLS sessions shared by every handle of one client, so a new pooled
// handle resumes a TLS session instead of a full handshake. libcurl calls the lock
// callbacks around each access to the shared data.
class CurlShare {
 public:
  CurlShare() : share_(CurlGlobalInit() ? curl_share_init() : nullptr) {
    if (share_ == nullptr) return;
    curl_share_setopt(share_, CURLSHOPT_LOCKFUNC, Lock);
    curl_share_setopt(share_, CURLSHOPT_UNLOCKFUNC, Unlock);
    curl_share_setopt(share_, CURLSHOPT_USERDATA, this);
    curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  }
  ~CurlShare() {
    if (share_ != nullptr) curl_share_cleanup(share_);
  }
  CurlShare(const CurlShare&) = delete;
  CurlShare& operator=(const CurlShare&) = delete;

  CURLSH* get() const { return share_; }

 private:
  static Mutex* MutexFor(void* user, curl_lock_data data) {
    auto* self = static_cast<CurlShare*>(user);
    const auto i = static_cast<size_t>(data);
    return i < self->mutexes_.size() ? &self->mutexes_[i] : &self->mutexes_[0];
  }
  // Unbalanced on purpose (curl takes a lock in one callback and frees it in the other),
  // which the analysis cannot follow.
  static void Lock(CURL*, curl_lock_data data, curl_lock_access,
                   void* user) NO_THREAD_SAFETY_ANALYSIS {
    MutexFor(user, data)->Lock();
  }
  static void Unlock(CURL*, curl_lock_data data, void* user) NO_THREAD_SAFETY_ANALYSIS {
    MutexFor(user, data)->Unlock();
  }

  CURLSH* share_;
  std::array<Mutex, CURL_LOCK_DATA_LAST> mutexes_;  // guard curl's shared DNS and TLS caches
};

struct HttpClient::Impl {
  HttpClientOptions options;
  CurlShare share;  // declared before `idle`: outlives every handle that uses it
  Mutex mu;
  std::vector<CurlPtr> idle GUARDED_BY(mu);
  std::mt19937_64 rng GUARDED_BY(mu);

  explicit Impl(HttpClientOptions o) : options(std::move(o)), rng(std::random_device{}()) {}

  CurlPtr Acquire() {
    {
      MutexLock lock(mu);
      if (!idle.empty()) {
        CurlPtr h = std::move(idle.back());
        idle.pop_back();
        return h;
      }
    }
    if (!CurlGlobalInit()) return nullptr;
    return CurlPtr(curl_easy_init());
  }

  void Release(CurlPtr h) {
    MutexLock lock(mu);
    if (idle.size() < kMaxIdleHandles) idle.push_back(std::move(h));
  }

  std::chrono::milliseconds Backoff(int attempt, std::chrono::milliseconds retry_after) {
    MutexLock lock(mu);
    return options.retry.Backoff(attempt, rng, retry_after);
  }

  // One attempt on `h`, which is reset first (connections and caches survive a reset).
  CURLcode Perform(CURL* h, const ClientRequest& req, curl_slist* headers, Transfer* t,
                   char* error_buffer) {
    curl_easy_reset(h);
    t->handle = h;
    error_buffer[0] = '\0';
    curl_easy_setopt(h, CURLOPT_URL, req.url.c_str());
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_buffer);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, options.connect_timeout_ms);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, options.low_speed_bytes);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, options.low_speed_seconds);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    // Larger than the 16 KiB / 64 KiB defaults: fewer callbacks and syscalls on bulk
    // transfers (xorb bodies of up to 64 MiB), at 512 KiB per pooled handle.
    curl_easy_setopt(h, CURLOPT_BUFFERSIZE, kReceiveBufferBytes);
    curl_easy_setopt(h, CURLOPT_UPLOAD_BUFFERSIZE, kSendBufferBytes);
    curl_easy_setopt(h, CURLOPT_USERAGENT, options.user_agent.c_str());
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    if (share.get() != nullptr) curl_easy_setopt(h, CURLOPT_SHARE, share.get());
    if (options.accept_encoding) curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, OnHeader);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, t);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, OnBody);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, t);
    if (req.method == "GET") {
      curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else if (req.method == "HEAD") {
      curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (req.method == "POST" || req.method == "PUT" || !req.body.empty()) {
      static constexpr char kEmpty[] = "";
      curl_easy_setopt(h, CURLOPT_POST, 1L);
      curl_easy_setopt(h, CURLOPT_POSTFIELDS,
                       req.body.empty() ? kEmpty : reinterpret_cast<const char*>(req.body.data()));
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
      if (req.method != "POST") curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req.method.c_str());
    } else {
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req.method.c_str());
    }
    const CURLcode rc = curl_easy_perform(h);
    if (rc == CURLE_OK && !t->callback_threw) {
      try {
        t->Decide();  // an answer without body bytes
      } catch (...) {
        t->callback_threw = true;
      }
    }
    return rc;
  }

  Result<ClientResponse> Run(const ClientRequest& req, const StreamCallbacks* stream) {
    const std::string what = req.method + " " + std::string(UrlForMessage(req.url));
    if (req.method.empty() || HasLineBreakOrNul(req.method) || HasLineBreakOrNul(req.url)) {
      return Status::InvalidArgument(what + ": malformed method or URL");
    }
    bool has_content_type = false;
    SlistPtr headers;
    auto append = [&](const std::string& line) {
      curl_slist* next = curl_slist_append(headers.get(), line.c_str());
      if (next == nullptr) return false;
      (void)headers.release();
      headers.reset(next);
      return true;
    };
    for (const auto& [name, value] : req.headers) {
      if (name.empty() || HasLineBreakOrNul(name) || HasLineBreakOrNul(value) ||
          name.find(':') != std::string::npos) {
        return Status::InvalidArgument(what + ": malformed request header '" + OneLine(name, 64) +
                                       "'");
      }
      if (EqualsIgnoreAsciiCase(name, "Content-Type")) has_content_type = true;
      // "Name;" is libcurl's way to send a header with an empty value.
      if (!append(value.empty() ? name + ";" : name + ": " + value)) {
        return Status::Internal("out of memory building request headers");
      }
    }
    if (!append("Expect:")) return Status::Internal("out of memory building request headers");
    if (!has_content_type && !req.body.empty() &&
        !append("Content-Type: application/octet-stream")) {
      return Status::Internal("out of memory building request headers");
    }

    CurlPtr handle = Acquire();
    if (!handle) return Status::Internal("libcurl could not be initialized");
    struct Return {
      Impl* impl;
      CurlPtr* h;
      ~Return() { impl->Release(std::move(*h)); }
    } give_back{this, &handle};

    const int max_attempts = std::max(1, options.retry.max_attempts);
    char error_buffer[CURL_ERROR_SIZE];
    for (int attempt = 1;; ++attempt) {
      Transfer t;
      t.stream = stream;
      t.max_body = options.max_response_bytes;
      const CURLcode rc = Perform(handle.get(), req, headers.get(), &t, error_buffer);
      if (t.callback_threw) return Status::Internal(what + ": a response callback failed");
      if (t.cancelled) return Status::Cancelled(what + ": stopped by the consumer");
      if (t.too_large) {
        return Status::ResourceExhausted(what + ": answer larger than " +
                                         std::to_string(options.max_response_bytes) + " bytes");
      }

      Status cause;
      std::chrono::milliseconds retry_after{0};
      if (rc != CURLE_OK) {
        std::string detail = curl_easy_strerror(rc);
        if (error_buffer[0] != '\0') detail += " (" + OneLine(error_buffer, 200) + ")";
        if (rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL) {
          return Status::InvalidArgument(what + ": " + detail);
        }
        cause = Status::Unavailable(what + ": " + detail);
        if (!IsRetryableCurlCode(rc)) return cause;
      } else if (RetryPolicy::IsRetryableStatus(t.response.status)) {
        cause = Status::Unavailable(StatusFromResponse(t.response, what).message());
        retry_after = ParseRetryAfter(t.response.Header("Retry-After"));
      } else {
        return std::move(t.response);
      }

      if (attempt >= max_attempts) {
        return Status::Unavailable(cause.message() + " (gave up after " + std::to_string(attempt) +
                                   (attempt == 1 ? " attempt)" : " attempts)"));
      }
      if (t.delivered && (stream == nullptr || !stream->on_restart)) return cause;
      if (options.on_retry) options.on_retry(cause);
      std::this_thread::sleep_for(Backoff(attempt, retry_after));
      if (t.delivered) stream->on_restart();
    }
  }
};

HttpClient::HttpClient(HttpClientOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {
  CurlGlobalInit();
}

HttpClient::~HttpClient() = default;

Result<ClientResponse> HttpClient::Send(const ClientRequest& request) {
  return impl_->Run(request, nullptr);
}

Result<ClientResponse> HttpClient::Stream(const ClientRequest& request,
                                          const StreamCallbacks& callbacks) {
  if (!callbacks.sink) return Status::InvalidArgument("HttpClient::Stream needs a sink");
  return impl_->Run(request, &callbacks);
}

Status StatusFromResponse(const ClientResponse& response, std::string_view what) {
  const int code = response.status;
  if (code >= 200 && code < 300) return Status::Ok();
  std::string detail;
  // Error documents are small; a large body is not worth parsing for one line.
  const auto j = response.body.size() <= (64u << 10)
                     ? nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false)
                     : nlohmann::json();
  if (j.is_object()) {
    const auto it = j.find("error");
    if (it != j.end() && it->is_string()) detail = OneLine(it->get_ref<const std::string&>(), 300);
  }
  if (detail.empty()) detail = OneLine(response.body, 300);
  std::string msg(what);
  msg += ": ";
  msg += detail.empty() ? "the server answered an error" : detail;
  msg += " (HTTP " + std::to_string(code) + ")";
  switch (code) {
    case 401:
      return Status::Unauthenticated(msg);
    case 403:
      return Status::PermissionDenied(msg);
    case 404:
      return Status::NotFound(msg);
    case 409:
      return Status::AlreadyExists(msg);
    case 413:
      return Status::ResourceExhausted(msg);
    case 416:
      return Status::OutOfRange(msg);
    case 408:
    case 429:
    case 502:
    case 503:
    case 504:
      return Status::Unavailable(msg);
    case 501:
      return Status::Unimplemented(msg);
    case 507:
      return Status::InsufficientStorage(msg);
    default:
      break;
  }
  if (code >= 400 && code < 500) return Status::InvalidArgument(msg);
  return Status::Internal(msg);
}

}  // namespace xet
