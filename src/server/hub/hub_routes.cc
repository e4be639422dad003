#include "server/hub/hub_routes.h"

#include "http/route_table.h"

namespace xet {

Status RegisterHubRoutes(Router& router, HubService& s) {
  using Admin = BucketAdminService;
  static constexpr MemberRoute<Admin> kAdminRoutes[] = {
      {"POST", "/api/buckets/{ns}/{name}", &Admin::CreateBucket, "bucket_create",
       kMaxBucketJsonBody, &Admin::CheckCreate},
      {"GET", "/api/buckets/{ns}/{name}", &Admin::GetBucketInfo, "bucket_info", 0},
      {"DELETE", "/api/buckets/{ns}/{name}", &Admin::DeleteBucket, "bucket_delete", 0},
      {"GET", "/api/buckets/{ns}", &Admin::ListBuckets, "bucket_list", 0},
      {"POST", "/api/repos/move", &Admin::MoveBucket, "bucket_move", kMaxBucketJsonBody,
       &Admin::CheckMove},
  };
  using Tokens = XetTokenService;
  static constexpr MemberRoute<Tokens> kTokenRoutes[] = {
      {"GET", "/api/buckets/{ns}/{name}/xet-read-token", &Tokens::XetReadToken, "bucket_read_token",
       0},
      {"GET", "/api/buckets/{ns}/{name}/xet-read-token/{revision}", &Tokens::XetReadToken,
       "bucket_read_token", 0},
      {"GET", "/api/buckets/{ns}/{name}/xet-write-token", &Tokens::XetWriteToken,
       "bucket_write_token", 0},
      {"GET", "/api/buckets/{ns}/{name}/xet-write-token/{revision}", &Tokens::XetWriteToken,
       "bucket_write_token", 0},
  };
  static constexpr MemberRoute<BucketBatchService> kBatchRoutes[] = {
      {"POST", "/api/buckets/{ns}/{name}/batch", &BucketBatchService::Batch, "bucket_batch",
       kMaxBatchBody, &BucketBatchService::CheckBatch},
  };
  using Listing = BucketListingService;
  static constexpr MemberRoute<Listing> kListingRoutes[] = {
      {"GET", "/api/buckets/{ns}/{name}/tree", &Listing::Tree, "bucket_tree", 0},
      {"GET", "/api/buckets/{ns}/{name}/tree/{*prefix}", &Listing::Tree, "bucket_tree", 0},
      {"POST", "/api/buckets/{ns}/{name}/paths-info", &Listing::PathsInfo, "bucket_paths_info",
       kMaxPathsInfoBody, &Listing::CheckPathsInfo},
  };
  static constexpr MemberRoute<ResolveService> kResolveRoutes[] = {
      {"GET", "/buckets/{ns}/{name}/resolve/{*path}", &ResolveService::Resolve, "bucket_resolve",
       0},
  };
  // Registered in the order of the table in hub_routes.h.
  XET_RETURN_IF_ERROR(RegisterMemberRoutes<Admin>(router, s.admin(), kAdminRoutes));
  XET_RETURN_IF_ERROR(RegisterMemberRoutes<Tokens>(router, s.xet_tokens(), kTokenRoutes));
  XET_RETURN_IF_ERROR(RegisterMemberRoutes<BucketBatchService>(router, s.batch(), kBatchRoutes));
  XET_RETURN_IF_ERROR(RegisterMemberRoutes<Listing>(router, s.listing(), kListingRoutes));
  return RegisterMemberRoutes<ResolveService>(router, s.resolve(), kResolveRoutes);
}

}  // namespace xet
