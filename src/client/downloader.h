// Downloader: reconstructs Xet files from a CAS server into local files or streams.
//
// Plans with /v2/reconstructions in blocks of `block_bytes` of the file, fetches the xorb
// ranges of a block in parallel (`fetch_concurrency` in flight; multi-range GETs, falling
// back to single ranges), decompresses and checks every chunk (hash and length) before
// writing, reuses a fetched chunk for every term that needs it, and writes each term at its
// file offset (pwrite) as soon as it is ready. Files are written to "<dest>.xetpart" and
// renamed over `dest` only when complete and fsync'd, so an interrupted download never
// leaves a half-written destination; an existing .xetpart with a matching sidecar resumes
// (only the missing blocks are fetched). An optional on-disk chunk cache (bounded, LRU by
// access) serves repeated downloads without network.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "client/cas_client.h"
#include "client/transfer_stats.h"
#include "common/result.h"
#include "format/hash.h"

namespace xet {

struct DownloadOptions {
  size_t fetch_concurrency = 8;
  uint64_t block_bytes = 256ull << 20;  // reconstruction planning granularity
  std::string chunk_cache_dir;          // "" = no cache
  uint64_t chunk_cache_bytes = 10ull << 30;
  TransferStats* stats = nullptr;
};

class Downloader {
 public:
  // `cas` must outlive the downloader.
  Downloader(CasClient& cas, DownloadOptions options);
  ~Downloader();

  // Writes the whole file (`size` bytes, from the listing) to `dest` atomically as above.
  // Corruption when a chunk fails its checks (nothing is renamed into place).
  Status DownloadToFile(const Hash& file_hash, uint64_t size, const std::string& dest);

  // Streams bytes [first, last] (inclusive) of the file, in order, to `sink`.
  Status DownloadRange(const Hash& file_hash, uint64_t first, uint64_t last,
                       const std::function<bool(std::string_view)>& sink);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace xet
