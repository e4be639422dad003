#include "store/s3/s3_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstring>
#include <optional>
#include <random>
#include <thread>

#include "format/sha256.h"

namespace xet {
namespace {

bool CurlReady() {
  // Process-wide and reference-counted by libcurl: every user initialises it once.
  static const bool ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  return ok;
}

struct CurlSlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using CurlSlist = std::unique_ptr<curl_slist, CurlSlistDeleter>;

// Feeds a request body to curl from its pieces.
struct BodyReader {
  std::span<const std::span<const uint8_t>> parts;
  size_t part = 0;
  size_t offset = 0;

  static size_t Read(char* dst, size_t size, size_t n, void* self) {
    auto& r = *static_cast<BodyReader*>(self);
    const size_t room = size * n;
    size_t done = 0;
    while (done < room && r.part < r.parts.size()) {
      const auto& p = r.parts[r.part];
      const size_t k = std::min(room - done, p.size() - r.offset);
      if (k > 0) std::memcpy(dst + done, p.data() + r.offset, k);
      done += k;
      r.offset += k;
      if (r.offset == p.size()) {
        ++r.part;
        r.offset = 0;
      }
    }
    return done;
  }
};

// Collects a response body into the request's buffer or the response's text.
struct BodyWriter {
  CURL* curl;
  const S3Request* request;
  S3Response* response;
  bool overflow = false;

  static size_t Write(char* src, size_t size, size_t n, void* self) {
    auto& w = *static_cast<BodyWriter*>(self);
    const size_t len = size * n;
    S3Response& r = *w.response;
    // The status line has arrived before any body byte. An error answer to a GET into a
    // buffer is XML: it goes to the text.
    if (r.status == 0) curl_easy_getinfo(w.curl, CURLINFO_RESPONSE_CODE, &r.status);
    if (!w.request->into.empty() && r.status >= 200 && r.status < 300) {
      if (r.body_bytes + len > w.request->into.size()) {
        w.overflow = true;
        return 0;
      }
      std::memcpy(w.request->into.data() + r.body_bytes, src, len);
    } else {
      if (r.text.size() + len > w.request->max_text) {
        w.overflow = true;
        return 0;
      }
      r.text.append(src, len);
    }
    r.body_bytes += len;
    return len;
  }
};

// The object's size from a Content-Range value "bytes FIRST-LAST/SIZE"; nullopt when the
// size is unknown ("*") or the value does not have that form.
std::optional<uint64_t> ContentRangeSize(std::string_view v) {
  const size_t slash = v.rfind('/');
  if (!v.starts_with("bytes ") || slash == std::string_view::npos) return std::nullopt;
  const std::string_view size = v.substr(slash + 1);
  uint64_t n = 0;
  const auto [p, ec] = std::from_chars(size.data(), size.data() + size.size(), n);
  if (ec != std::errc() || p != size.data() + size.size()) return std::nullopt;
  return n;
}

// At the end of the headers of a ranged GET: ends the transfer when the object is too short
// for the range (some servers then announce bytes they never send).
struct HeaderCheck {
  CURL* curl;
  const S3Request* request;
  S3Response* response;

  static size_t Line(char* line, size_t size, size_t n, void* self) {
    auto& h = *static_cast<HeaderCheck*>(self);
    const size_t len = size * n;
    if (len != 2 || line[0] != '\r' || h.request->into.empty()) return len;
    long status = 0;
    curl_easy_getinfo(h.curl, CURLINFO_RESPONSE_CODE, &status);
    curl_header* range = nullptr;
    if (status != 206 ||
        curl_easy_header(h.curl, "Content-Range", 0, CURLH_HEADER, -1, &range) != CURLHE_OK) {
      return len;
    }
    const std::optional<uint64_t> object_size = ContentRangeSize(range->value);
    if (object_size && (h.request->range_offset > *object_size ||
                        h.request->into.size() > *object_size - h.request->range_offset)) {
      h.response->range_outside = true;
      return 0;  // ends the transfer
    }
    return len;
  }
};

bool TransientStatus(long status) {
  return status == 500 || status == 502 || status == 503 || status == 504 || status == 429;
}

bool TransientCurl(CURLcode c) {
  switch (c) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
      return true;
    default:
      return false;
  }
}

std::string PayloadHash(std::span<const std::span<const uint8_t>> parts) {
  Sha256 sha;
  for (const auto& p : parts) sha.Update(p);
  return Sha256Hex(sha.Finish());
}

}  // namespace

class S3Client::Handle {
 public:
  Handle() : curl_(curl_easy_init()) {}
  ~Handle() {
    if (curl_ != nullptr) curl_easy_cleanup(curl_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  CURL* get() const { return curl_; }

 private:
  CURL* curl_;
};

S3Client::S3Client(S3Options options)
    : options_(std::move(options)),
      sigv4_("aws:amz:" + options_.region + ":s3"),
      userpwd_(options_.access_key + ":" + options_.secret_key) {}

S3Client::~S3Client() = default;

std::string S3Client::ObjectKey(std::string_view key) const {
  if (options_.prefix.empty()) return std::string(key);
  return options_.prefix + "/" + std::string(key);
}

std::unique_ptr<S3Client::Handle> S3Client::Acquire() {
  {
    MutexLock lock(mu_);
    if (!idle_.empty()) {
      auto h = std::move(idle_.back());
      idle_.pop_back();
      return h;
    }
  }
  return std::make_unique<Handle>();
}

void S3Client::Release(std::unique_ptr<Handle> handle) {
  MutexLock lock(mu_);
  idle_.push_back(std::move(handle));
}

Result<S3Response> S3Client::Send(const S3Request& request) {
  if (!CurlReady()) return Status::Internal("libcurl could not be initialised");
  std::unique_ptr<Handle> handle = Acquire();
  if (handle->get() == nullptr) return Status::Internal("curl_easy_init failed");
  std::chrono::milliseconds backoff = options_.first_backoff;
  const int attempts = std::max(1, options_.max_attempts);
  Result<S3Response> last = Status::Unavailable("no attempt made");
  for (int attempt = 1;; ++attempt) {
    bool transient = false;
    last = SendOnce(*handle, request, &transient);
    if (!transient) break;
    if (attempt >= attempts) {
      const std::string why =
          last.ok() ? "HTTP " + std::to_string(last->status) : last.status().message();
      last = Status::Unavailable("S3 " + request.method + " " + request.object_key +
                                 " failed after " + std::to_string(attempts) + " attempts: " + why);
      break;
    }
    // Full jitter: a random wait up to the backoff, so retrying nodes spread out.
    std::random_device rd;
    const auto wait = std::chrono::milliseconds(
        std::uniform_int_distribution<int64_t>(backoff.count() / 2, backoff.count())(rd));
    std::this_thread::sleep_for(wait);
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
  Release(std::move(handle));
  return last;
}

Result<S3Response> S3Client::SendOnce(Handle& handle, const S3Request& request, bool* transient) {
  CURL* c = handle.get();
  curl_easy_reset(c);
  std::string url = options_.endpoint;
  if (options_.path_style) {
    url += "/" + options_.bucket;
  } else {
    const size_t scheme = url.find("://") + 3;
    url.insert(scheme, options_.bucket + ".");
  }
  url += "/" + S3UriEncode(request.object_key, true);
  if (!request.query.empty()) url += "?" + request.query;

  uint64_t body_size = 0;
  for (const auto& p : request.body) body_size += p.size();
  CurlSlist headers;
  const auto add = [&](const std::string& h) {
    curl_slist* l = curl_slist_append(headers.get(), h.c_str());
    if (l != nullptr) {
      (void)headers.release();
      headers.reset(l);
    }
    return l != nullptr;
  };
  bool ok = add("x-amz-content-sha256: " + PayloadHash(request.body)) && add("Expect:");
  if (!options_.session_token.empty()) {
    ok = ok && add("x-amz-security-token: " + options_.session_token);
  }
  for (const std::string& h : request.headers) ok = ok && add(h);
  if (!request.into.empty()) {
    ok = ok && add("Range: bytes=" + std::to_string(request.range_offset) + "-" +
                   std::to_string(request.range_offset + request.into.size() - 1));
  }
  if (!ok) return Status::Internal("cannot build the request headers");

  S3Response response;
  BodyReader reader{request.body};
  BodyWriter writer{c, &request, &response};
  HeaderCheck header_check{c, &request, &response};
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_AWS_SIGV4, sigv4_.c_str());
  curl_easy_setopt(c, CURLOPT_USERPWD, userpwd_.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::chrono::milliseconds(options_.connect_timeout).count()));
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1024L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, static_cast<long>(options_.stall_timeout.count()));
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &BodyWriter::Write);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &writer);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &HeaderCheck::Line);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &header_check);
  if (request.method == "HEAD") {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else if (request.method == "PUT") {
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(body_size));
    curl_easy_setopt(c, CURLOPT_READFUNCTION, &BodyReader::Read);
    curl_easy_setopt(c, CURLOPT_READDATA, &reader);
  } else if (request.method == "POST") {
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body_size));
    curl_easy_setopt(c, CURLOPT_READFUNCTION, &BodyReader::Read);
    curl_easy_setopt(c, CURLOPT_READDATA, &reader);
  } else if (request.method != "GET") {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  const CURLcode rc = curl_easy_perform(c);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  response.status = status;
  if (response.range_outside) return response;
  if (writer.overflow) {
    return Status::ResourceExhausted("S3 " + request.method + " " + request.object_key +
                                     ": the answer is longer than expected");
  }
  if (rc != CURLE_OK) {
    *transient = TransientCurl(rc);
    return Status::Unavailable("S3 " + request.method + " " + request.object_key + ": " +
                               curl_easy_strerror(rc));
  }
  curl_off_t length = -1;
  if (curl_easy_getinfo(c, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK &&
      length >= 0) {
    response.content_length = static_cast<uint64_t>(length);
  }
  curl_header* etag = nullptr;
  if (curl_easy_header(c, "ETag", 0, CURLH_HEADER, -1, &etag) == CURLHE_OK) {
    response.etag = etag->value;
  }
  if (TransientStatus(status)) {
    *transient = true;
  } else if (status >= 400 && !response.text.empty()) {
    auto err = ParseS3Error(response.text);
    if (err.ok() && (err->code == "SlowDown" || err->code == "InternalError" ||
                     err->code == "RequestTimeout")) {
      *transient = true;
    }
  }
  return response;
}

std::string S3UriEncode(std::string_view s, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
                            c == '~' || (keep_slash && c == '/');
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

Status S3Failure(const S3Response& response, std::string_view what) {
  S3Error err;
  if (!response.text.empty()) {
    if (auto parsed = ParseS3Error(response.text); parsed.ok()) err = std::move(parsed).value();
  }
  std::string msg = "S3 " + std::string(what) + ": HTTP " + std::to_string(response.status);
  if (!err.code.empty()) msg += " " + err.code;
  if (!err.message.empty()) msg += " (" + err.message + ")";
  const long s = response.status;
  if (s == 404) return Status::NotFound(msg);
  if (s == 403) return Status::PermissionDenied(msg);
  if (s == 416) return Status::OutOfRange(msg);
  if (s == 507 || err.code == "QuotaExceeded" || err.code == "EntityTooLarge") {
    return Status::InsufficientStorage(msg);
  }
  if (s >= 500 || s == 429) return Status::Unavailable(msg);
  return Status::IoError(msg);
}

}  // namespace xet
