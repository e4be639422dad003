#include "server/cas/cas_routes.h"

#include "http/route_table.h"

namespace xet {

Status RegisterCasRoutes(Router& router, CasService& s) {
  static constexpr MemberRoute<CasService> kRoutes[] = {
      {"POST", "/v1/xorbs/{prefix}/{hash}", &CasService::UploadXorb, "xorb_upload", kMaxXorbBody,
       &CasService::CheckUploader},
      {"HEAD", "/v1/xorbs/{prefix}/{hash}", &CasService::HeadXorb, "xorb_head", 0},
      {"POST", "/v1/shards", &CasService::UploadShard, "shard_upload", kMaxShardBody,
       &CasService::CheckUploader},
      {"POST", "/v2/shards", &CasService::UploadShardStreaming, "shard_upload_v2", kMaxShardBody,
       &CasService::CheckUploader},
      {"GET", "/v1/chunks/{prefix}/{hash}", &CasService::QueryChunk, "dedup_query", 0},
      {"GET", "/v2/reconstructions/{file_id}", &CasService::GetReconstructionV2,
       "reconstruction_v2", 0},
      {"GET", "/v1/reconstructions/{file_id}", &CasService::GetReconstructionV1,
       "reconstruction_v1", 0},
      {"POST", "/v1/reconstructions", &CasService::BatchReconstruction, "reconstruction_batch",
       kMaxBatchReconstructionBody, &CasService::CheckReader},
      {"HEAD", "/v1/files/{file_id}", &CasService::HeadFile, "file_head", 0},
      {"GET", "/v1/transfer/xorb/{prefix}/{hash}", &CasService::GetTransfer, "transfer", 0},
      {"GET", "/v2/file-chunk-hashes/{file_id}", &CasService::GetFileChunkHashes,
       "file_chunk_hashes", 0},
  };
  return RegisterMemberRoutes<CasService>(router, s, kRoutes);
}

}  // namespace xet
