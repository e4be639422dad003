#include "api/cas_routes.h"

namespace xet {

Status RegisterCasRoutes(Router& router, CasService& s) {
  using H = HttpResponse (CasService::*)(const HttpRequest&, const RouteParams&);
  auto bind = [&s](H method) {
    return [&s, method](const HttpRequest& req, const RouteParams& params) {
      return (s.*method)(req, params);
    };
  };
  struct Route {
    const char* method;
    const char* pattern;
    H handler;
    const char* name;
    uint64_t max_body;
  };
  const Route routes[] = {
      {"POST", "/v1/xorbs/{prefix}/{hash}", &CasService::UploadXorb, "xorb_upload", kMaxXorbBody},
      {"HEAD", "/v1/xorbs/{prefix}/{hash}", &CasService::HeadXorb, "xorb_head", 0},
      {"POST", "/v1/shards", &CasService::UploadShard, "shard_upload", kMaxShardBody},
      {"POST", "/v2/shards", &CasService::UploadShardStreaming, "shard_upload_v2", kMaxShardBody},
      {"GET", "/v1/chunks/{prefix}/{hash}", &CasService::QueryChunk, "dedup_query", 0},
      {"GET", "/v2/reconstructions/{file_id}", &CasService::GetReconstructionV2,
       "reconstruction_v2", 0},
      {"GET", "/v1/reconstructions/{file_id}", &CasService::GetReconstructionV1,
       "reconstruction_v1", 0},
      {"POST", "/v1/reconstructions", &CasService::BatchReconstruction, "reconstruction_batch",
       kMaxBatchReconstructionBody},
      {"HEAD", "/v1/files/{file_id}", &CasService::HeadFile, "file_head", 0},
      {"GET", "/v1/transfer/xorb/{prefix}/{hash}", &CasService::GetTransfer, "transfer", 0},
      {"GET", "/v2/file-chunk-hashes/{file_id}", &CasService::GetFileChunkHashes,
       "file_chunk_hashes", 0},
  };
  for (const Route& r : routes) {
    RouteOptions opts;
    opts.name = r.name;
    opts.max_body_bytes = r.max_body;
    XET_RETURN_IF_ERROR(router.Add(r.method, r.pattern, bind(r.handler), opts));
  }
  return Status::Ok();
}

}  // namespace xet
