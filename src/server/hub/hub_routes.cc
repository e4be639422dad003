#include "server/hub/hub_routes.h"

#include "http/route_table.h"

namespace xet {

Status RegisterHubRoutes(Router& router, HubService& s) {
  static constexpr MemberRoute<HubService> kRoutes[] = {
      {"POST", "/api/buckets/{ns}/{name}", &HubService::CreateBucket, "bucket_create",
       kMaxBucketJsonBody, &HubService::CheckBucketWriter},
      {"GET", "/api/buckets/{ns}/{name}", &HubService::GetBucketInfo, "bucket_info", 0},
      {"DELETE", "/api/buckets/{ns}/{name}", &HubService::DeleteBucket, "bucket_delete", 0},
      {"GET", "/api/buckets/{ns}", &HubService::ListBuckets, "bucket_list", 0},
      {"POST", "/api/repos/move", &HubService::MoveBucket, "bucket_move", kMaxBucketJsonBody,
       &HubService::CheckWriter},
      {"GET", "/api/buckets/{ns}/{name}/xet-read-token", &HubService::XetReadToken,
       "bucket_read_token", 0},
      {"GET", "/api/buckets/{ns}/{name}/xet-read-token/{revision}", &HubService::XetReadToken,
       "bucket_read_token", 0},
      {"GET", "/api/buckets/{ns}/{name}/xet-write-token", &HubService::XetWriteToken,
       "bucket_write_token", 0},
      {"GET", "/api/buckets/{ns}/{name}/xet-write-token/{revision}", &HubService::XetWriteToken,
       "bucket_write_token", 0},
      {"POST", "/api/buckets/{ns}/{name}/batch", &HubService::Batch, "bucket_batch", kMaxBatchBody,
       &HubService::CheckBucketWriter},
      {"GET", "/api/buckets/{ns}/{name}/tree", &HubService::Tree, "bucket_tree", 0},
      {"GET", "/api/buckets/{ns}/{name}/tree/{*prefix}", &HubService::Tree, "bucket_tree", 0},
      {"POST", "/api/buckets/{ns}/{name}/paths-info", &HubService::PathsInfo, "bucket_paths_info",
       kMaxPathsInfoBody, &HubService::CheckBucketReader},
      {"GET", "/buckets/{ns}/{name}/resolve/{*path}", &HubService::Resolve, "bucket_resolve", 0},
  };
  return RegisterMemberRoutes<HubService>(router, s, kRoutes);
}

}  // namespace xet
