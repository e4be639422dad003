// S3Client: signed requests to one S3 bucket over libcurl, whose built-in SigV4
// (CURLOPT_AWS_SIGV4) signs them; retries with backoff on transient failures.
//
// Contract:
//   - Every request carries x-amz-content-sha256: the SHA-256 of its body (so the server
//     rejects a body damaged on the way), and x-amz-security-token with temporary
//     credentials.
//   - Send retries up to options.max_attempts times, with exponential backoff and jitter,
//     on connection errors and stalls (no byte for options.stall_timeout), on HTTP 500, 502,
//     503, 504 and 429, and on 200-less answers whose S3 error code is SlowDown,
//     InternalError or RequestTimeout. Bodies are resent whole. Other answers are returned
//     as they are, whatever their status: the caller maps them (S3Failure).
//   - Memory: a response body is collected up to the request's `max_text` bytes (the XML
//     answers) or written into the caller's buffer (`into`); a longer one fails the request.
//   - Thread-safe: requests from any number of threads; curl handles (and so their
//     connections) are pooled and reused.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/mutex.h"
#include "common/result.h"
#include "store/s3/s3_options.h"
#include "store/s3/s3_xml.h"

namespace xet {

struct S3Request {
  std::string method = "GET";  // GET, HEAD, PUT, POST, DELETE
  std::string object_key;      // the full key within the bucket (prefix included); "" = bucket
  // The query, canonical as SigV4 signs it: "name=value" pairs sorted by name, joined by
  // '&', names and values URI-encoded (S3UriEncode); "" = none.
  std::string query;
  std::vector<std::string> headers;                // extra "Name: value" lines
  std::span<const std::span<const uint8_t>> body;  // PUT/POST body, in pieces
  // GET of bytes [range_offset, range_offset + into.size()) written into `into`: the
  // client sends the Range header; more bytes than asked fail the request, and an answer
  // whose Content-Range says the object is shorter ends it at once (range_outside).
  std::span<uint8_t> into;
  uint64_t range_offset = 0;
  size_t max_text = kMaxS3XmlBytes;  // bound of a body collected into S3Response::text
};

struct S3Response {
  long status = 0;
  std::string text;         // the body, unless the request had `into`
  uint64_t body_bytes = 0;  // body bytes received
  std::optional<uint64_t> content_length;
  std::string etag;  // with its quotes, as sent
  // The answer's Content-Range gave the object's size, and the requested range does not fit
  // in it (the request was ended after the headers).
  bool range_outside = false;
};

class S3Client {
 public:
  explicit S3Client(S3Options options);
  ~S3Client();
  S3Client(const S3Client&) = delete;
  S3Client& operator=(const S3Client&) = delete;

  const S3Options& options() const { return options_; }

  // PREFIX/KEY (KEY alone without a prefix).
  std::string ObjectKey(std::string_view key) const;

  // Sends `request` (see the retry contract above). Errors: Unavailable after the last
  // attempt of a transient failure; ResourceExhausted for a body over its bound; Internal
  // when curl cannot be set up.
  Result<S3Response> Send(const S3Request& request);

 private:
  class Handle;
  Result<S3Response> SendOnce(Handle& handle, const S3Request& request, bool* transient);
  std::unique_ptr<Handle> Acquire();
  void Release(std::unique_ptr<Handle> handle);

  const S3Options options_;
  const std::string sigv4_;    // "aws:amz:REGION:s3"
  const std::string userpwd_;  // "ACCESS:SECRET"
  Mutex mu_;
  std::vector<std::unique_ptr<Handle>> idle_ GUARDED_BY(mu_);
};

// S3's URI encoding (RFC 3986 unreserved characters kept, everything else %XX uppercase);
// '/' kept when `keep_slash`.
std::string S3UriEncode(std::string_view s, bool keep_slash);

// The Status for an answer that is not a success: the S3 error code and message when the
// body has them. 404 → NotFound, 403 → PermissionDenied, 416 → OutOfRange, 507 and
// QuotaExceeded/EntityTooLarge → InsufficientStorage, 5xx/429 → Unavailable, other →
// IoError; the message names `what` and the code.
Status S3Failure(const S3Response& response, std::string_view what);

}  // namespace xet
