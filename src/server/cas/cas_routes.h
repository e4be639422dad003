// Binds the CAS API handlers (server/cas/cas_service.h) to their routes, with per-route body
// limits:
//   POST /v1/xorbs/{prefix}/{hash}     64 MiB + 1 MiB slack   HEAD same path
//   POST /v1/shards, POST /v2/shards   kMaxShardBody
//   GET  /v1/chunks/{prefix}/{hash}
//   GET  /v2/reconstructions/{file_id}, GET /v1/reconstructions/{file_id}
//   POST /v1/reconstructions           1 MiB
//   HEAD /v1/files/{file_id}
//   GET  /v1/transfer/xorb/{prefix}/{hash}  (signed URLs; no Authorization)
//   GET  /v2/file-chunk-hashes/{file_id}     (X-Range-Dirty)
#pragma once

#include <cstdint>

#include "http/router.h"
#include "server/cas/cas_service.h"

namespace xet {

inline constexpr uint64_t kMaxXorbBody = (64 + 1) << 20;
inline constexpr uint64_t kMaxShardBody = 128 << 20;
inline constexpr uint64_t kMaxBatchReconstructionBody = 1 << 20;

// `service` must outlive the router. Fails only if a route is already registered.
Status RegisterCasRoutes(Router& router, CasService& service);

}  // namespace xet
