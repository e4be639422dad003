// HubClient: the Hub-compatible bucket API of a xetstore server (or the Hub itself), as
// typed calls. Stateless apart from the endpoint and user token; thread-safe.
// Every call returns the server's error mapped by StatusFromResponse (NotFound for an
// unknown or unreadable bucket, PermissionDenied, Unauthenticated, Unavailable, ...).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "client/transport/http_client.h"
#include "common/result.h"
#include "format/hash.h"
#include "protocol/posix_metadata.h"

namespace xet {

struct RemoteBucket {
  std::string id;  // "NAMESPACE/BUCKET"
  bool is_private = true;
  std::string created_at;  // ISO-8601 as the server sent it
  uint64_t size = 0;
  uint64_t total_files = 0;
  // xetstore extension ("generation"): grows with every batch that changed an entry of the
  // bucket, so "did anything change?" is one cheap request. 0 when the server does not
  // send it (the Hub).
  uint64_t generation = 0;
};

// POSIX metadata kept with a bucket entry (xetstore extension; protocol/posix_metadata.h
// holds the struct, its rules and its JSON codec, shared with the server).
using RemotePosix = PosixMetadata;

struct RemoteEntry {
  bool is_directory = false;
  std::string path;  // inside the bucket
  uint64_t size = 0;
  Hash xet_hash;            // files only
  int64_t mtime_ms = 0;     // 0 = unknown
  std::string uploaded_at;  // ISO-8601, may be empty
  std::string content_type;
  // Set when the entry carries POSIX metadata. A directory with it is an explicit directory
  // entry (it exists even when empty); one without it only holds entries below it.
  std::optional<RemotePosix> posix;
};

// One line of a batch (the NDJSON ops of POST /api/buckets/{id}/batch).
struct RemoteOp {
  // kAddDirectory: an explicit directory entry at `path` (xetstore extension);
  // kSetMetadata: replaces the mtime and POSIX metadata of the entry at `path` (an implied
  // directory gets an explicit entry) without touching its content (xetstore extension).
  enum class Kind {
    kAddFile,
    kDeleteFile,
    kCopyFile,
    kCopyPrefix,
    kMovePrefix,
    kAddDirectory,
    kSetMetadata
  };
  Kind kind = Kind::kAddFile;
  std::string path;  // add/delete/copy target
  Hash xet_hash;     // add/copy
  int64_t mtime_ms = 0;
  std::string content_type;
  std::string source_bucket;         // copy/copyPrefix: "NAMESPACE/BUCKET"
  std::string from, to;              // copyPrefix/movePrefix
  std::optional<RemotePosix> posix;  // addFile, addDirectory, setMetadata
  // movePrefix: fail the op when anything exists at `to` or below it (rename NOREPLACE).
  bool no_replace = false;
};

struct BatchOutcome {
  uint64_t processed = 0;
  uint64_t succeeded = 0;
  struct Failure {
    std::string path;
    std::string error;
  };
  std::vector<Failure> failed;
};

// A short-lived CAS token and where to use it.
struct XetToken {
  std::string access_token;
  std::string cas_url;
  int64_t expires_at = 0;  // unix seconds
};

class HubClient {
 public:
  // `endpoint` without trailing '/', e.g. "http://127.0.0.1:8080"; `token` may be empty
  // (anonymous: public buckets only). `http` must outlive the client.
  HubClient(HttpClient& http, std::string endpoint, std::string token);

  // Bucket ids are "NAMESPACE/BUCKET" with valid names (protocol/bucket_path.h), checked
  // before any request (InvalidArgument). The created bucket's record carries the id and
  // privacy only (the create answer has no timestamps; the counts of a new bucket are 0).
  Result<RemoteBucket> CreateBucket(const std::string& bucket_id, bool is_private);
  Result<RemoteBucket> GetBucket(const std::string& bucket_id);
  // Every bucket of `ns` the token can read (follows pagination).
  Result<std::vector<RemoteBucket>> ListBuckets(const std::string& ns);
  Status DeleteBucket(const std::string& bucket_id);
  Status MoveBucket(const std::string& from_id, const std::string& to_id);

  Result<XetToken> GetXetToken(const std::string& bucket_id, bool write);

  // Calls `on_item` for each item under `prefix` ("" = root; one trailing '/' ignored),
  // following pagination (a next-page link to another origin is re-based on the endpoint,
  // so the token only goes to the endpoint); stops early (OK) when it returns false.
  // `page_limit` > 0 asks for pages of that many items (the server lowers it to its maximum).
  Status ListTree(const std::string& bucket_id, const std::string& prefix, bool recursive,
                  const std::function<bool(const RemoteEntry&)>& on_item, size_t page_limit = 0);
  // Entries for the paths that exist (batched by 1,000 per request).
  Result<std::vector<RemoteEntry>> PathsInfo(const std::string& bucket_id,
                                             std::span<const std::string> paths);
  // Applies `ops` (sent in requests of at most 10,000 ops; each request is atomic on the
  // server). Failed ops are reported in the outcome (the server answers 422), not as an
  // error Status; an error Status after the first request leaves the earlier requests
  // applied.
  Result<BatchOutcome> Batch(const std::string& bucket_id, std::span<const RemoteOp> ops);

  const std::string& endpoint() const { return endpoint_; }

 private:
  HttpClient& http_;
  std::string endpoint_;
  std::string token_;
};

}  // namespace xet
