// The Xet CAS API (spec api.md) as route handlers over an Index, an ObjectStore, the
// token service and the transfer signer. Transport-independent: handlers take and return
// http/message.h types; RegisterCasRoutes binds them to a Router.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/mutex.h"
#include "http/message.h"
#include "server/auth/token_service.h"
#include "server/cache/answer_cache.h"
#include "server/cache/cache_warmer.h"
#include "server/cache/file_record_cache.h"
#include "server/cache/recent_xorb_cache.h"
#include "server/cache/record_lru.h"
#include "server/cache/visible_xorb_cache.h"
#include "server/cache/xorb_record_cache.h"
#include "server/cas/reconstruction.h"
#include "server/cas/shard_ingest.h"
#include "store/index.h"
#include "store/object_store.h"

namespace xet {

class TransferSigner;
class Router;
class Metrics;
class Counter;

struct CasServiceConfig {
  std::string public_url;                   // base of URLs handed out, no trailing '/'
  int64_t transfer_url_ttl_s = 3600;        // lifetime of signed xorb fetch URLs
  int64_t dedup_key_ttl_s = 7 * 24 * 3600;  // shard_key_expiry of global-dedup answers
  size_t dedup_max_xorbs = 8;               // xorbs listed in one global-dedup answer
  size_t xorb_cache_bytes = 256 << 20;      // memory for cached xorb chunk tables
  size_t file_cache_bytes = 64 << 20;       // memory for cached file records (terms)
  size_t plan_cache_bytes = 64 << 20;       // memory for cached whole-file plans
  // Memory for whole reconstruction answers of large files (server/cache/answer_cache.h); 0 = off.
  // Cached answers are served while their URLs have >= 3/4 of transfer_url_ttl_s left.
  size_t answer_cache_bytes = 256 << 20;
  size_t max_batch_files = 1000;  // files in one POST /v1/reconstructions
  // Memory for the chunk data of recently uploaded xorbs (server/cache/recent_xorb_cache.h), from
  // which transfer GETs are answered before the object store is read; 0 = off.
  size_t recent_xorb_cache_bytes = 256 << 20;
  // Xorbs remembered as visible to an uploader's scopes (server/cache/visible_xorb_cache.h),
  // so a shard upload skips that index lookup; 0 = off.
  size_t visible_xorb_cache_entries = 65536;
};

class CasService {
 public:
  // All references must outlive the service. Thread-safe: handlers run concurrently.
  CasService(CasServiceConfig config, Index& index, ObjectStore& objects, TokenService& tokens,
             const TransferSigner& signer, Metrics* metrics = nullptr);

  ~CasService();

  // Replaces the base of the URLs handed out (e.g. once an ephemeral port is known).
  void SetPublicUrl(std::string url);

  // Fills the xorb-table and file-record caches with the newest records, then the plan
  // cache with the whole plans of those files that have at least kWarmPlanMinTerms terms,
  // up to `budget_bytes` each and for at most `max_time` (server/cache/cache_warmer.h); for the
  // start, before requests arrive.
  Result<CacheWarmStats> WarmCaches(size_t budget_bytes, std::chrono::milliseconds max_time);
  // Smaller files plan in microseconds: their plans are left to the first request.
  static constexpr size_t kWarmPlanMinTerms = 1024;

  HttpResponse UploadXorb(const HttpRequest& req, const RouteParams& params);
  HttpResponse HeadXorb(const HttpRequest& req, const RouteParams& params);
  HttpResponse UploadShard(const HttpRequest& req, const RouteParams& params);
  HttpResponse UploadShardStreaming(const HttpRequest& req, const RouteParams& params);
  HttpResponse QueryChunk(const HttpRequest& req, const RouteParams& params);
  HttpResponse HeadFile(const HttpRequest& req, const RouteParams& params);
  HttpResponse GetReconstructionV2(const HttpRequest& req, const RouteParams& params);
  HttpResponse GetReconstructionV1(const HttpRequest& req, const RouteParams& params);
  HttpResponse BatchReconstruction(const HttpRequest& req, const RouteParams& params);
  HttpResponse GetTransfer(const HttpRequest& req, const RouteParams& params);
  HttpResponse GetFileChunkHashes(const HttpRequest& req, const RouteParams& params);

  // Pre-body checks (RouteOptions::pre_body): the request's bearer token must be valid (401)
  // and carry write, for uploads also a single write scope (403), or read permission. They
  // see no body; the handlers still make every check.
  std::optional<HttpResponse> CheckUploader(const HttpRequest& head, const RouteParams& params);
  std::optional<HttpResponse> CheckReader(const HttpRequest& head, const RouteParams& params);

 private:
  Result<Principal> Authorize(const HttpRequest& req, Permission needed) const;
  // The file if it exists and one of the principal's scopes can see it; NotFound otherwise.
  Result<std::shared_ptr<const FileRecord>> VisibleFile(const Principal& p, const Hash& file_hash);
  // OK if one of the principal's scopes can see the file; NotFound otherwise.
  Status CheckFileVisible(const Principal& p, const Hash& file_hash);
  // The file's record regardless of scopes; NotFound if it is not registered.
  Result<std::shared_ptr<const FileRecord>> LoadFile(const Hash& file_hash);
  // The plan of `file`'s bytes `range` (all of it for nullopt), cut from its cached
  // whole-file plan (planned and cached on a miss); PlanReconstruction's result and errors.
  Result<ReconstructionPlan> PlanRange(const FileRecord& file, std::optional<ByteRange> range);
  // The cached whole-file plan of `file`, planned and cached on a miss.
  Result<std::shared_ptr<const WholeFilePlan>> WholePlan(const FileRecord& file);
  HttpResponse Reconstruction(const HttpRequest& req, const RouteParams& params, bool v2);
  std::string PublicUrl() const;
  void CountShard(const Result<ShardIngestResult>& result);

  const CasServiceConfig config_;  // its public_url is the initial one: see public_url_
  mutable Mutex public_url_mu_;
  std::string public_url_ GUARDED_BY(public_url_mu_);  // SetPublicUrl may change it
  Index& index_;
  ObjectStore& objects_;
  TokenService& tokens_;
  const TransferSigner& signer_;
  struct Counters;
  std::unique_ptr<Metrics> own_metrics_;  // when the caller passed none
  std::unique_ptr<Counters> counters_;
  XorbRecordCache xorb_cache_;
  VisibleXorbCache visible_xorbs_;
  FileRecordCache file_cache_;
  RecordLru<WholeFilePlan> plan_cache_;
  AnswerCache answer_cache_;
  RecentXorbCache recent_xorbs_;
};

}  // namespace xet
