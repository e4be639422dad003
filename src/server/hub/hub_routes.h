// Binds the handlers of the bucket API services (server/hub/hub_service.h) to their routes, with
// per-route body limits:
//   POST   /api/buckets/{ns}/{name}                      create        64 KiB
//   GET    /api/buckets/{ns}/{name}                      info
//   DELETE /api/buckets/{ns}/{name}                      delete
//   GET    /api/buckets/{ns}                             list
//   POST   /api/repos/move                               rename/transfer 64 KiB
//   GET    /api/buckets/{ns}/{name}/xet-read-token[/{revision}]
//   GET    /api/buckets/{ns}/{name}/xet-write-token[/{revision}]
//   POST   /api/buckets/{ns}/{name}/batch                NDJSON        kMaxBatchBody
//   GET    /api/buckets/{ns}/{name}/tree[/{*prefix}]
//   POST   /api/buckets/{ns}/{name}/paths-info           JSON          kMaxPathsInfoBody
//   GET    /buckets/{ns}/{name}/resolve/{*path}          (HEAD too)
#pragma once

#include <cstdint>

#include "http/router.h"
#include "server/hub/hub_service.h"

namespace xet {

inline constexpr uint64_t kMaxBucketJsonBody = 64 << 10;
inline constexpr uint64_t kMaxBatchBody = 64 << 20;
inline constexpr uint64_t kMaxPathsInfoBody = 4 << 20;

// `service` must outlive the router. Fails only if a route is already registered.
Status RegisterHubRoutes(Router& router, HubService& service);

}  // namespace xet
