#include "server/cas/cas_service.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <nlohmann/json.hpp>

#include "format/shard_writer.h"
#include "http/metrics.h"
#include "http/response_compression.h"
#include "protocol/byte_range.h"
#include "server/auth/crypto_util.h"
#include "server/cache/answer_cache.h"
#include "server/cas/file_chunk_hashes.h"
#include "server/cas/reconstruction.h"
#include "server/cas/shard_ingest.h"
#include "server/cas/xorb_ingest.h"
#include "server/http_status.h"
#include "server/request_bodies.h"
#include "server/transfer/transfer_signer.h"
#include "server/transfer/xorb_range_response.h"

namespace xet {
namespace {

Result<Hash> HashParam(const RouteParams& params, const char* name) {
  const auto it = params.find(name);
  if (it == params.end()) return Status::InvalidArgument(std::string("missing ") + name);
  const auto h = Hash::FromHex(it->second);
  if (!h || it->second.size() != 64) {
    return Status::InvalidArgument(std::string("malformed ") + name +
                                   ": expected 64 lowercase hex characters");
  }
  return *h;
}

std::span<const uint8_t> BodyBytes(const HttpRequest& req) { return AsBytes(req.body); }

// Upload validation failures are the client's: every non-storage error is a 400.
HttpResponse UploadError(const Status& st) {
  if (st.code() == Status::Code::kResourceExhausted || st.code() == Status::Code::kCorruption ||
      st.code() == Status::Code::kNotFound) {
    return HttpResponse::Error(400, st.message());
  }
  return ErrorResponse(st);
}

std::string NdjsonLine(const nlohmann::json& event) { return event.dump() + "\n"; }

}  // namespace

// CAS-level counters exported on /metrics.
struct CasService::Counters {
  explicit Counters(Metrics& m)
      : dedup_hits(m.GetCounter("xetstore_dedup_queries_total", "Global dedup queries by outcome.",
                                {{"result", "hit"}})),
        dedup_misses(m.GetCounter("xetstore_dedup_queries_total",
                                  "Global dedup queries by outcome.", {{"result", "miss"}})),
        xorbs_inserted(m.GetCounter("xetstore_xorbs_uploaded_total", "Xorb uploads by outcome.",
                                    {{"result", "inserted"}})),
        xorbs_existing(m.GetCounter("xetstore_xorbs_uploaded_total", "Xorb uploads by outcome.",
                                    {{"result", "existed"}})),
        xorb_raw_bytes(m.GetCounter("xetstore_xorb_raw_bytes_total",
                                    "Uncompressed bytes of newly stored xorbs.")),
        shards_registered(m.GetCounter("xetstore_shards_uploaded_total",
                                       "Shard uploads by outcome.", {{"result", "registered"}})),
        shards_existing(m.GetCounter("xetstore_shards_uploaded_total", "Shard uploads by outcome.",
                                     {{"result", "existed"}})),
        uploads_rejected(m.GetCounter("xetstore_uploads_rejected_total",
                                      "Xorb and shard uploads rejected as invalid (400).")),
        answer_cache_hits(m.GetCounter("xetstore_answer_cache_total",
                                       "Large reconstruction answers by answer-cache outcome.",
                                       {{"result", "hit"}})),
        answer_cache_misses(m.GetCounter("xetstore_answer_cache_total",
                                         "Large reconstruction answers by answer-cache outcome.",
                                         {{"result", "miss"}})),
        recent_xorb_hits(m.GetCounter("xetstore_recent_xorb_cache_total",
                                      "Xorb transfer GETs by recent-xorb-cache outcome.",
                                      {{"result", "hit"}})),
        recent_xorb_misses(m.GetCounter("xetstore_recent_xorb_cache_total",
                                        "Xorb transfer GETs by recent-xorb-cache outcome.",
                                        {{"result", "miss"}})) {}
  Counter& dedup_hits;
  Counter& dedup_misses;
  Counter& xorbs_inserted;
  Counter& xorbs_existing;
  Counter& xorb_raw_bytes;
  Counter& shards_registered;
  Counter& shards_existing;
  Counter& uploads_rejected;
  Counter& answer_cache_hits;
  Counter& answer_cache_misses;
  Counter& recent_xorb_hits;
  Counter& recent_xorb_misses;
};

CasService::CasService(CasServiceConfig config, Index& index, ObjectStore& objects,
                       TokenService& tokens, const TransferSigner& signer, Metrics* metrics)
    : config_(std::move(config)),
      public_url_(config_.public_url),
      index_(index),
      objects_(objects),
      tokens_(tokens),
      signer_(signer),
      own_metrics_(metrics ? nullptr : std::make_unique<Metrics>()),
      counters_(std::make_unique<Counters>(metrics ? *metrics : *own_metrics_)),
      xorb_cache_(index, config_.xorb_cache_bytes),
      visible_xorbs_(config_.visible_xorb_cache_entries),
      file_cache_(index, config_.file_cache_bytes),
      plan_cache_(config_.plan_cache_bytes),
      answer_cache_(config_.answer_cache_bytes, config_.transfer_url_ttl_s * 3 / 4),
      recent_xorbs_(config_.recent_xorb_cache_bytes) {}

CasService::~CasService() = default;

void CasService::SetPublicUrl(std::string url) {
  MutexLock lock(public_url_mu_);
  public_url_ = std::move(url);
  answer_cache_.Clear();  // its answers name the old base
}

Result<CacheWarmStats> CasService::WarmCaches(size_t budget_bytes,
                                              std::chrono::milliseconds max_time) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto deadline = t0 + max_time;
  XET_ASSIGN_OR_RETURN(CacheWarmStats stats,
                       WarmRecordCaches(index_, xorb_cache_, file_cache_, budget_bytes, deadline));
  const size_t plan_budget = std::min(budget_bytes, plan_cache_.capacity_bytes());
  for (const Hash& h : stats.file_hashes) {
    if (std::chrono::steady_clock::now() > deadline) break;
    auto file = file_cache_.Get(h);
    if (!file.ok()) return file.status();
    if (*file == nullptr || (*file)->terms.size() < kWarmPlanMinTerms) continue;
    if (plan_cache_.bytes() >= plan_budget) break;
    auto whole = WholePlan(**file);
    if (!whole.ok()) continue;  // a file that cannot be planned is answered as before
    if (plan_cache_.Find(h) == nullptr) continue;  // larger than the whole cache
    ++stats.plans;
    stats.bytes += WholeFilePlanBytes(**whole);
  }
  stats.ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return stats;
}

std::string CasService::PublicUrl() const {
  MutexLock lock(public_url_mu_);
  return public_url_;
}

void CasService::CountShard(const Result<ShardIngestResult>& result) {
  if (!result.ok()) {
    if (HttpStatusFor(result.status()) < 500) counters_->uploads_rejected.Increment();
  } else if (result->result == ShardCommitResult::kRegistered) {
    counters_->shards_registered.Increment();
  } else {
    counters_->shards_existing.Increment();
  }
}

Result<Principal> CasService::Authorize(const HttpRequest& req, Permission needed) const {
  XET_ASSIGN_OR_RETURN(Principal p, tokens_.Authenticate(req.headers.Get("authorization")));
  XET_RETURN_IF_ERROR(RequirePermission(p, needed));
  return p;
}

std::optional<HttpResponse> CasService::CheckUploader(const HttpRequest& head, const RouteParams&) {
  auto principal = Authorize(head, Permission::kWrite);
  if (!principal.ok()) return ErrorResponse(principal.status());
  if (auto scope = WriteScope(*principal); !scope.ok()) return ErrorResponse(scope.status());
  return std::nullopt;
}

std::optional<HttpResponse> CasService::CheckReader(const HttpRequest& head, const RouteParams&) {
  auto principal = Authorize(head, Permission::kRead);
  if (!principal.ok()) return ErrorResponse(principal.status());
  return std::nullopt;
}

HttpResponse CasService::UploadXorb(const HttpRequest& req, const RouteParams& params) {
  auto principal = Authorize(req, Permission::kWrite);
  if (!principal.ok()) return ErrorResponse(principal.status());
  if (params.at("prefix") != "default") {
    return HttpResponse::Error(400, "unknown xorb prefix; only 'default' is served");
  }
  auto hash = HashParam(params, "hash");
  if (!hash.ok()) return ErrorResponse(hash.status());
  auto scope = WriteScope(*principal);
  if (!scope.ok()) return ErrorResponse(scope.status());
  auto result = IngestXorb(*hash, BodyBytes(req), *scope, index_, objects_);
  if (!result.ok()) {
    if (HttpStatusFor(result.status()) < 500) counters_->uploads_rejected.Increment();
    return UploadError(result.status());
  }
  // Verified and durable: the downloads that usually follow are answered from memory. Only
  // when this upload wrote the object: then the body is byte for byte its chunk data.
  if (result->stored) recent_xorbs_.Insert(*hash, BodyBytes(req));
  if (result->inserted) {
    counters_->xorbs_inserted.Increment();
    counters_->xorb_raw_bytes.Increment(result->raw_bytes);
  } else {
    counters_->xorbs_existing.Increment();
  }
  return HttpResponse::Json(nlohmann::json{{"was_inserted", result->inserted}}.dump());
}

HttpResponse CasService::HeadXorb(const HttpRequest& req, const RouteParams& params) {
  auto principal = Authorize(req, Permission::kRead);
  if (!principal.ok()) return ErrorResponse(principal.status());
  if (params.at("prefix") != "default") return HttpResponse::Error(400, "unknown xorb prefix");
  auto hash = HashParam(params, "hash");
  if (!hash.ok()) return ErrorResponse(hash.status());
  auto visible = index_.XorbVisible(*hash, principal->read_scopes());
  if (!visible.ok()) return ErrorResponse(visible.status());
  if (!*visible) return HttpResponse::Error(404, "xorb not found");
  auto rec = index_.GetXorb(*hash);
  if (!rec.ok()) return ErrorResponse(rec.status());
  if (!*rec) return HttpResponse::Error(404, "xorb not found");
  HttpResponse res;
  res.content_length = (*rec)->object_size;
  return res;
}

HttpResponse CasService::UploadShard(const HttpRequest& req, const RouteParams&) {
  auto principal = Authorize(req, Permission::kWrite);
  if (!principal.ok()) return ErrorResponse(principal.status());
  auto scope = WriteScope(*principal);
  if (!scope.ok()) return ErrorResponse(scope.status());
  ShardIngestOptions opts;
  opts.visible_scopes = principal->read_scopes();
  opts.scope = *scope;
  opts.xorb_records = &xorb_cache_;
  opts.visible_xorbs = &visible_xorbs_;
  auto result = IngestShard(BodyBytes(req), opts, index_, objects_);
  CountShard(result);
  if (!result.ok()) return UploadError(result.status());
  return HttpResponse::Json(nlohmann::json{{"result", static_cast<int>(result->result)}}.dump());
}

HttpResponse CasService::UploadShardStreaming(const HttpRequest& req, const RouteParams&) {
  auto principal = Authorize(req, Permission::kWrite);
  if (!principal.ok()) return ErrorResponse(principal.status());
  auto scope = WriteScope(*principal);
  if (!scope.ok()) return ErrorResponse(scope.status());

  HttpResponse res;
  res.headers.Set("Content-Type", "application/x-ndjson");
  res.headers.Set("Cache-Control", "no-cache");
  // The stream runs after this handler returns, when the request is gone: it keeps its
  // own copy of the body.
  auto body = std::make_shared<const std::string>(req.body);
  res.stream = [this, body, p = *principal,
                sc = *scope](const std::function<bool(std::string_view)>& write) {
    std::atomic<size_t> verified{0}, total{0};
    ShardIngestOptions opts;
    opts.visible_scopes = p.read_scopes();
    opts.scope = sc;
    opts.xorb_records = &xorb_cache_;
    opts.visible_xorbs = &visible_xorbs_;
    opts.progress = [&](size_t v, size_t t) {
      verified.store(v, std::memory_order_relaxed);
      total.store(t, std::memory_order_relaxed);
    };
    auto job = std::async(std::launch::async,
                          [&] { return IngestShard(AsBytes(*body), opts, index_, objects_); });
    // Progress every 500 ms; the same event repeats as a heartbeat while nothing moves.
    while (job.wait_for(std::chrono::milliseconds(500)) != std::future_status::ready) {
      if (!write(NdjsonLine({{"type", "validating"},
                             {"verified", verified.load(std::memory_order_relaxed)},
                             {"total", total.load(std::memory_order_relaxed)}}))) {
        job.wait();  // the client left; finish (or fail) the registration anyway
        return;
      }
    }
    auto result = job.get();
    CountShard(result);
    if (!result.ok()) {
      const HttpResponse err = UploadError(result.status());
      const auto msg = nlohmann::json::parse(err.body, nullptr, false);
      write(NdjsonLine(
          {{"type", "error"}, {"message", msg.is_object() ? msg.value("error", "") : err.body}}));
      return;
    }
    write(
        NdjsonLine({{"type", "validating"}, {"verified", total.load()}, {"total", total.load()}}));
    write(NdjsonLine({{"type", "committing"}, {"stage", "syncing"}}));
    write(NdjsonLine({{"type", "result"}, {"result", static_cast<int>(result->result)}}));
  };
  return res;
}

HttpResponse CasService::QueryChunk(const HttpRequest& req, const RouteParams& params) {
  auto principal = Authorize(req, Permission::kRead);
  if (!principal.ok()) return ErrorResponse(principal.status());
  const std::string& prefix = params.at("prefix");
  if (prefix != "default-merkledb" && prefix != "default") {
    return HttpResponse::Error(400, "unknown dedup prefix; use 'default-merkledb'");
  }
  auto hash = HashParam(params, "hash");
  if (!hash.ok()) return ErrorResponse(hash.status());
  auto xorbs = index_.FindXorbsWithChunk(*hash, principal->read_scopes(), config_.dedup_max_xorbs);
  if (!xorbs.ok()) return ErrorResponse(xorbs.status());
  if (xorbs->empty()) {
    counters_->dedup_misses.Increment();
    return HttpResponse::Error(404, "chunk not tracked for deduplication");
  }
  counters_->dedup_hits.Increment();

  std::vector<CasInfo> infos;
  for (const Hash& xh : *xorbs) {
    auto rec = index_.GetXorb(xh);
    if (!rec.ok()) return ErrorResponse(rec.status());
    if (!*rec) continue;
    CasInfo info;
    info.cas_hash = xh;
    uint32_t start = 0;
    for (const XorbChunkRow& c : (*rec)->chunks) {
      info.entries.push_back({c.hash, start, c.uncompressed_end - start, 0, 0});
      start = c.uncompressed_end;
    }
    info.num_bytes_in_cas = start;
    info.num_bytes_on_disk = static_cast<uint32_t>((*rec)->object_size);
    infos.push_back(std::move(info));
  }
  Hash key;
  const auto random = SecureRandomBytes(Hash::kSize);
  key = Hash::FromBytes(random.data());
  const int64_t now = tokens_.Now();
  const Shard shard = BuildGlobalDedupShard(infos, key, static_cast<uint64_t>(now),
                                            static_cast<uint64_t>(now + config_.dedup_key_ttl_s));
  auto bytes = SerializeShard(shard);
  if (!bytes.ok()) return ErrorResponse(bytes.status());
  HttpResponse res;
  res.headers.Set("Content-Type", "application/octet-stream");
  res.body.assign(bytes->begin(), bytes->end());
  return res;
}

HttpResponse CasService::HeadFile(const HttpRequest& req, const RouteParams& params) {
  auto principal = Authorize(req, Permission::kRead);
  if (!principal.ok()) return ErrorResponse(principal.status());
  auto hash = HashParam(params, "file_id");
  if (!hash.ok()) return ErrorResponse(hash.status());
  auto visible = index_.FileVisible(*hash, principal->read_scopes());
  if (!visible.ok()) return ErrorResponse(visible.status());
  if (!*visible) return HttpResponse::Error(404, "file not found");
  auto rec = index_.GetFile(*hash);
  if (!rec.ok()) return ErrorResponse(rec.status());
  if (!*rec) return HttpResponse::Error(404, "file not found");
  HttpResponse res;
  res.content_length = (*rec)->size;
  return res;
}

Status CasService::CheckFileVisible(const Principal& p, const Hash& file_hash) {
  XET_ASSIGN_OR_RETURN(bool visible, index_.FileVisible(file_hash, p.read_scopes()));
  return visible ? Status::Ok() : Status::NotFound("file not found");
}

Result<std::shared_ptr<const FileRecord>> CasService::LoadFile(const Hash& file_hash) {
  XET_ASSIGN_OR_RETURN(auto rec, file_cache_.Get(file_hash));
  if (!rec) return Status::NotFound("file not found");
  return rec;
}

Result<std::shared_ptr<const FileRecord>> CasService::VisibleFile(const Principal& p,
                                                                  const Hash& file_hash) {
  XET_RETURN_IF_ERROR(CheckFileVisible(p, file_hash));
  return LoadFile(file_hash);
}

namespace {

// A lookup over the cache that keeps each record it hands out alive in *held and records
// the first storage error in *error.
XorbLookup CachedLookup(XorbRecordCache& cache,
                        std::vector<std::shared_ptr<const XorbRecord>>* held, Status* error) {
  return [&cache, held, error](const Hash& h) -> const XorbRecord* {
    auto rec = cache.Get(h);
    if (!rec.ok()) {
      *error = rec.status();
      return nullptr;
    }
    held->push_back(*rec);
    return rec->get();
  };
}

// Answers this large (in terms) that the client takes uncompressed are streamed; see
// StreamedReconstruction.
constexpr size_t kStreamMinTerms = 4096;  // ~0.9 MB of v2 JSON
constexpr size_t kStreamPieceBytes = 1 << 20;

// A large answer is sent while it is written (chunked transfer encoding), in pieces of
// kStreamPieceBytes: no 20-50 MB buffer per request to allocate, fault in and copy, and the
// socket copy overlaps the writing. Answers the client takes compressed are built whole
// instead (the server compresses buffered bodies only). With `keep` set, a complete answer
// is also handed to `keep` (to be cached) once written.
using KeepAnswer = std::function<void(std::shared_ptr<const CachedAnswer>)>;
HttpResponse StreamedReconstruction(ReconstructionPlan plan, TransferUrlSigner signer, bool v2,
                                    int64_t urls_expire_at, KeepAnswer keep) {
  struct Answer {
    ReconstructionPlan plan;
    TransferUrlSigner signer;
  };
  auto answer = std::make_shared<Answer>(Answer{std::move(plan), std::move(signer)});
  HttpResponse res;
  res.headers.Set("Content-Type", "application/json");
  res.stream = [answer, v2, urls_expire_at,
                keep = std::move(keep)](const std::function<bool(std::string_view)>& write) {
    auto kept = std::make_shared<CachedAnswer>();
    kept->urls_expire_at = urls_expire_at;
    const ReconstructionSink sink = [&](std::string_view piece) {
      if (keep) {
        kept->pieces.emplace_back(piece);
        kept->bytes += piece.size();
      }
      return write(piece);
    };
    const bool complete =
        v2 ? StreamReconstructionV2(answer->plan, answer->signer, {}, sink, kStreamPieceBytes)
           : StreamReconstructionV1(answer->plan, answer->signer, sink, kStreamPieceBytes);
    if (complete && keep) keep(std::move(kept));
  };
  return res;
}

// Sends a cached answer as it was first sent, under its exact Content-Length, without
// copying it.
HttpResponse CachedReconstruction(std::shared_ptr<const CachedAnswer> cached) {
  HttpResponse res;
  res.headers.Set("Content-Type", "application/json");
  const auto* pieces = &cached->pieces;
  res.shared_body = std::shared_ptr<const std::vector<std::string>>(std::move(cached), pieces);
  return res;
}

// Plans with chunk tables from the cache, keeping each record alive for the plan's use.
Result<ReconstructionPlan> Plan(XorbRecordCache& cache, const FileRecord& file,
                                std::optional<ByteRange> range) {
  std::vector<std::shared_ptr<const XorbRecord>> held;
  Status lookup_error;
  auto plan = PlanReconstruction(file, CachedLookup(cache, &held, &lookup_error), range);
  if (!lookup_error.ok()) return lookup_error;
  return plan;
}

}  // namespace

Result<std::shared_ptr<const WholeFilePlan>> CasService::WholePlan(const FileRecord& file) {
  if (auto hit = plan_cache_.Find(file.file_hash)) return hit;
  std::vector<std::shared_ptr<const XorbRecord>> held;
  Status lookup_error;
  auto whole = PlanWholeFile(file, CachedLookup(xorb_cache_, &held, &lookup_error));
  if (!lookup_error.ok()) return lookup_error;
  if (!whole.ok()) return whole.status();
  auto shared = std::make_shared<const WholeFilePlan>(std::move(*whole));
  plan_cache_.Insert(file.file_hash, shared, WholeFilePlanBytes(*shared));
  return shared;
}

Result<ReconstructionPlan> CasService::PlanRange(const FileRecord& file,
                                                 std::optional<ByteRange> range) {
  auto whole = WholePlan(file);
  if (!whole.ok()) {
    // A file with a broken term (a corrupted index) has no whole plan, but a range that
    // avoids the term is still answered: plan that range directly, as before.
    if (whole.status().code() != Status::Code::kCorruption) return whole.status();
    return Plan(xorb_cache_, file, range);
  }
  std::vector<std::shared_ptr<const XorbRecord>> held;
  Status lookup_error;
  auto plan = SlicePlan(**whole, CachedLookup(xorb_cache_, &held, &lookup_error), range);
  if (!lookup_error.ok()) return lookup_error;
  return plan;
}

HttpResponse CasService::Reconstruction(const HttpRequest& req, const RouteParams& params,
                                        bool v2) {
  auto principal = Authorize(req, Permission::kRead);
  if (!principal.ok()) return ErrorResponse(principal.status());
  auto hash = HashParam(params, "file_id");
  if (!hash.ok()) return ErrorResponse(hash.status());
  if (Status st = CheckFileVisible(*principal, *hash); !st.ok()) return ErrorResponse(st);

  std::optional<ByteRange> range;
  if (auto header = req.headers.Get("range")) {
    auto ranges = ParseByteRanges(*header, {.max_ranges = 1, .allow_open_end = true});
    if (!ranges.ok())
      return HttpResponse::Error(400, "bad Range header: " + ranges.status().message());
    range = (*ranges)[0];
  }
  // xetstore extension (v2 only): each term's chunk lengths and each range's chunk offsets.
  bool chunk_detail = false;
  if (auto detail = req.QueryParam("chunk_detail"); v2 && detail) {
    if (*detail == "1" || *detail == "true") {
      chunk_detail = true;
    } else if (*detail != "0" && *detail != "false" && !detail->empty()) {
      return HttpResponse::Error(400, "chunk_detail must be 0, 1, true or false");
    }
  }
  const bool identity = ChooseContentEncoding(req.headers.Get("Accept-Encoding").value_or("")) ==
                        ContentEncoding::kIdentity;
  // Whole-file answers sent uncompressed come from, and go to, the answer cache.
  // (Answers with chunk detail are cached apart: the same file answers differently.)
  const std::string cache_key =
      !range && identity ? std::string(v2 ? (chunk_detail ? "v2d/" : "v2/") : "v1/") + hash->ToHex()
                         : std::string();
  if (!cache_key.empty()) {
    if (auto cached = answer_cache_.Get(cache_key, tokens_.Now())) {
      counters_->answer_cache_hits.Increment();
      return CachedReconstruction(std::move(cached));
    }
  }
  auto file = LoadFile(*hash);
  if (!file.ok()) return ErrorResponse(file.status());
  auto plan = PlanRange(**file, range);
  if (!plan.ok()) {
    if (plan.status().code() == Status::Code::kOutOfRange) {
      HttpResponse res = HttpResponse::Error(416, "range starts past the end of the file");
      res.headers.Set("Content-Range", "bytes */" + std::to_string((*file)->size));
      return res;
    }
    return ErrorResponse(plan.status());
  }
  if (chunk_detail) {
    std::vector<std::shared_ptr<const XorbRecord>> held;
    Status lookup_error;
    Status st = AddChunkDetail(&*plan, CachedLookup(xorb_cache_, &held, &lookup_error));
    if (!lookup_error.ok()) return ErrorResponse(lookup_error);
    if (!st.ok()) return ErrorResponse(st);
  }
  const int64_t urls_expire_at = tokens_.Now() + config_.transfer_url_ttl_s;
  auto url_signer = signer_.NewUrlSigner(PublicUrl(), urls_expire_at);
  if (!url_signer.ok()) return ErrorResponse(url_signer.status());
  if (plan->terms.size() >= kStreamMinTerms && identity) {
    KeepAnswer keep;
    if (!cache_key.empty()) {
      counters_->answer_cache_misses.Increment();
      keep = [this, cache_key](std::shared_ptr<const CachedAnswer> answer) {
        answer_cache_.Put(cache_key, std::move(answer));
      };
    }
    return StreamedReconstruction(std::move(*plan), std::move(*url_signer), v2, urls_expire_at,
                                  std::move(keep));
  }
  return HttpResponse::Json(v2 ? SerializeReconstructionV2(*plan, *url_signer)
                               : SerializeReconstructionV1(*plan, *url_signer));
}

HttpResponse CasService::GetReconstructionV2(const HttpRequest& req, const RouteParams& params) {
  return Reconstruction(req, params, true);
}

HttpResponse CasService::GetReconstructionV1(const HttpRequest& req, const RouteParams& params) {
  return Reconstruction(req, params, false);
}

HttpResponse CasService::BatchReconstruction(const HttpRequest& req, const RouteParams&) {
  auto principal = Authorize(req, Permission::kRead);
  if (!principal.ok()) return ErrorResponse(principal.status());
  auto parsed = ParseBatchReconstructionBody(req.body, config_.max_batch_files);
  if (!parsed.ok()) return ErrorResponse(parsed.status());
  const std::vector<Hash>& hashes = *parsed;
  std::vector<ReconstructionPlan> plans;
  plans.reserve(hashes.size());
  for (const Hash& h : hashes) {
    auto file = VisibleFile(*principal, h);
    if (!file.ok()) {
      if (file.status().code() == Status::Code::kNotFound) {
        return HttpResponse::Error(404, "file " + h.ToHex() + " not found");
      }
      return ErrorResponse(file.status());
    }
    auto plan = PlanRange(**file, std::nullopt);
    if (!plan.ok()) return ErrorResponse(plan.status());
    plans.push_back(std::move(*plan));
  }
  std::vector<FileReconstruction> files;
  for (size_t i = 0; i < hashes.size(); ++i) files.push_back({hashes[i], &plans[i]});
  auto url_signer = signer_.NewUrlSigner(PublicUrl(), tokens_.Now() + config_.transfer_url_ttl_s);
  if (!url_signer.ok()) return ErrorResponse(url_signer.status());
  return HttpResponse::Json(SerializeBatchReconstruction(files, *url_signer));
}

HttpResponse CasService::GetTransfer(const HttpRequest& req, const RouteParams& params) {
  // Self-authorizing: the signature in the query is the credential; no Authorization.
  if (params.at("prefix") != "default") return HttpResponse::Error(400, "unknown xorb prefix");
  auto hash = HashParam(params, "hash");
  if (!hash.ok()) return ErrorResponse(hash.status());
  const auto signed_range = req.QueryParam("X-Xet-Signed-Range");
  const auto expires = req.QueryParam("Expires");
  const auto signature = req.QueryParam("Signature");
  TransferQuery query;
  query.signed_range = signed_range ? std::string_view(*signed_range) : std::string_view();
  query.expires = expires ? std::string_view(*expires) : std::string_view();
  query.signature = signature ? std::string_view(*signature) : std::string_view();
  const TransferVerification v = signer_.Verify(*hash, query, tokens_.Now());
  if (!v.ok()) {
    const int code = v.error == TransferAuthError::kMalformed ? 400 : 403;
    return HttpResponse::Error(
        code, std::string("transfer URL rejected: ") + TransferAuthErrorName(v.error));
  }
  auto rec = xorb_cache_.Get(*hash);
  if (!rec.ok()) return ErrorResponse(rec.status());
  if (!*rec || (*rec)->chunks.empty()) return HttpResponse::Error(404, "xorb not found");
  const uint64_t data_len = (*rec)->chunks.back().compressed_end;
  if (recent_xorbs_.capacity_bytes() > 0) {
    // The cached bytes are the uploaded body, which IngestXorb accepted only when its chunk
    // data ends exactly where the table says; the size check guards that invariant.
    auto chunk_data = recent_xorbs_.Find(*hash);
    if (chunk_data && chunk_data->size() == data_len) {
      counters_->recent_xorb_hits.Increment();
      return BuildXorbRangeResponse(data_len, v.ranges, req.headers.Get("range"),
                                    XorbSource::FromMemory(std::move(chunk_data)));
    }
    counters_->recent_xorb_misses.Increment();
  }
  const std::string key = XorbKey(*hash);
  // The reader may run after this returns (a streamed answer): it owns its key, and the
  // object store outlives the server's connections.
  ObjectStore& objects = objects_;
  XorbSource source([&objects, key](uint64_t offset, std::span<uint8_t> out) {
    return objects.ReadRange(key, offset, out);
  });
  // A store with local files lets large answers go out with sendfile(2). Without one (or
  // if opening fails) the reader serves them, and reports any error itself.
  if (auto file = objects.OpenFile(key); file.ok()) source.file = std::move(file).value();
  return BuildXorbRangeResponse(data_len, v.ranges, req.headers.Get("range"), std::move(source));
}

HttpResponse CasService::GetFileChunkHashes(const HttpRequest& req, const RouteParams& params) {
  auto principal = Authorize(req, Permission::kRead);
  if (!principal.ok()) return ErrorResponse(principal.status());
  auto hash = HashParam(params, "file_id");
  if (!hash.ok()) return ErrorResponse(hash.status());
  const auto header = req.headers.Get("x-range-dirty");
  if (!header) return HttpResponse::Error(400, "missing X-Range-Dirty header (bytes=a-b,...)");
  auto dirty = ParseDirtyRangesHeader(*header);
  if (!dirty.ok())
    return HttpResponse::Error(400, "bad X-Range-Dirty: " + dirty.status().message());
  auto file = VisibleFile(*principal, *hash);
  if (!file.ok()) return ErrorResponse(file.status());
  std::vector<std::shared_ptr<const XorbRecord>> held;
  Status lookup_error;
  auto json =
      BuildFileChunkHashesJson(**file, CachedLookup(xorb_cache_, &held, &lookup_error), *dirty);
  if (!lookup_error.ok()) return ErrorResponse(lookup_error);
  if (!json.ok()) return ErrorResponse(json.status());
  return HttpResponse::Json(std::move(*json));
}

}  // namespace xet
