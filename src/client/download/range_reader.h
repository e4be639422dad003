// RangeReader: random-access reads of Xet files, for the FUSE mount and the S3 gateway.
//
// Contract:
//   - Plans: one reconstruction request (the whole file, with chunk detail) per file while
//     its plan is valid; plans expire after `plan_ttl` (keep it below the life of the signed
//     URLs), at most `plan_cache_entries` are kept (LRU), and concurrent requests for one
//     file share one fetch (PlanCache). A fetch refused with PermissionDenied (an expired or
//     revoked URL) makes the read fetch a new plan once and retry.
//   - Chunk-exact fetches: with chunk detail a read maps to exactly the chunks covering it,
//     and missing chunks are fetched as sub-ranges of the signed ranges (one GET per run of
//     consecutive chunks). Without detail (an older server) the unit of fetching is a whole
//     fetch range. Chunk records are checked (chunk_records.h) and every decoded chunk's
//     length is checked against the plan; data served is byte-identical to the file.
//   - Caches: decoded chunks are kept in memory (LRU by bytes, keyed by xorb hash + chunk
//     index) and, with `chunk_cache_dir`, in the bounded on-disk ChunkCache (entries keyed by
//     xorb + chunk run, checked against their chunk hashes when read), so deduplicated data
//     is fetched once across files and streams. Chunks fetched for sequential streams are
//     stored on disk only with `cache_sequential` (they are still read from it when there).
//   - Memory: decoded chunks and read-ahead are held within `memory_bytes` in total (plus
//     what the reads in progress hold: their own chunks, about one fetch run per fetch
//     thread). Chunk buffers come from an arena of about `memory_bytes` in huge pages
//     (ChunkBufferPool), reserved at construction and resident once used, until destroyed.
//   - Streams detect sequential access (reads starting within 32 read sizes, at least
//     512 KiB, of where the stream's reads so far end: concurrent read-ahead requests
//     arrive out of order) and read ahead on the fetch threads, the window
//     growing from 8 MiB to 128 MiB while the access stays sequential, capped so that the
//     read-ahead of all sequential streams fits in half of `memory_bytes`. A read fetches
//     the chunks it lacks itself, on its own thread, or waits for a fetch already bringing
//     them: it never waits for read-ahead of bytes it did not ask for. Reads of one Stream
//     may run concurrently (they share only a small lock for the access pattern).
//   - Chunk data from the network is not hash-verified (a range has no hash to check, as in
//     Downloader::DownloadRange); cache entries are checked against the hashes computed
//     when they were stored.
// Thread-safe. Streams must be destroyed before their RangeReader.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "client/cas/cas_client.h"
#include "common/result.h"
#include "format/hash.h"

namespace xet {

struct RangeReaderOptions {
  size_t plan_cache_entries = 4096;        // whole-file plans kept (LRU)
  std::chrono::seconds plan_ttl{50 * 60};  // < the 1 h life of signed URLs
  std::string chunk_cache_dir;             // on-disk chunk cache shared by all files ("" = none)
  uint64_t chunk_cache_bytes = 10ull << 30;
  uint64_t memory_bytes = 128ull << 20;  // decoded chunks + read-ahead held in memory, total
  size_t fetch_threads = 8;              // read-ahead and plan prefetch (0 is treated as 1)
  // Whether chunks fetched for streams reading sequentially (their read-ahead and their
  // own fetches) go to the on-disk chunk cache too. Off: writing them costs more than the
  // rest of a cold sequential read (page-cache copies, ext4 allocation, a hash per chunk:
  // docs/bench-log/mount.md), and a whole-file read is what the kernel's page cache keeps.
  // Random reads always store.
  bool cache_sequential = false;
};

// The CAS calls a RangeReader makes: CasClient's (MakeCasRangeSource), or a test's fake.
class RangeSource {
 public:
  virtual ~RangeSource() = default;
  // The whole file's reconstruction with chunk detail (GetReconstruction(file, nullopt,
  // true)).
  virtual Result<Reconstruction> Reconstruct(const Hash& file) = 0;
  // The bytes of range `range` of `entry`, in order, in pieces (CasClient::StreamRange).
  virtual Status StreamRange(const FetchEntry& entry, size_t range,
                             const std::function<Status(std::span<const uint8_t>)>& on_bytes) = 0;
};
// `cas` must outlive the source.
std::unique_ptr<RangeSource> MakeCasRangeSource(CasClient& cas);

class RangeReader {
 public:
  // Counters, for tests and benchmarks.
  struct Stats {
    uint64_t reconstruction_requests = 0;
    uint64_t fetches = 0;        // xorb range GETs
    uint64_t fetched_bytes = 0;  // compressed bytes received
    uint64_t disk_chunks = 0;    // chunks served from the on-disk cache
  };

  // `cas` must outlive the reader.
  RangeReader(CasClient& cas, RangeReaderOptions options);
  // `clock` (default steady_clock::now) times plan expiry.
  RangeReader(std::unique_ptr<RangeSource> source, RangeReaderOptions options,
              std::function<std::chrono::steady_clock::time_point()> clock = {});
  // Joins the fetch threads (queued read-ahead is dropped).
  ~RangeReader();
  RangeReader(const RangeReader&) = delete;
  RangeReader& operator=(const RangeReader&) = delete;

  // OK, or why the chunk cache could not be opened (then every Read returns it).
  Status status() const;

  // Starts fetching the plan in the background (the mount calls this at open()). Nothing
  // for an empty file or one whose plan is cached or being fetched.
  void PrefetchPlan(const Hash& file, uint64_t size);

  // A per-open-file stream (see the contract above).
  class Stream {
   public:
    virtual ~Stream() = default;
    // Reads up to out.size() bytes at `offset`; returns how many were read: fewer only at
    // the end of the file (0 at or past it, and for an empty `out`). Errors: the plan's
    // (NotFound for an unknown or invisible file, Corruption for an inconsistent answer),
    // the fetches' (PermissionDenied when a fresh plan's URL is refused too, Corruption for
    // malformed chunk data).
    virtual Result<size_t> Read(uint64_t offset, std::span<uint8_t> out) = 0;
  };
  // `size`: the file's size from the listing. `read_ahead` false: reads are never taken for
  // sequential and fetch only the chunks they ask for (a commit fetching the few ranges
  // around a file's changes).
  std::unique_ptr<Stream> Open(const Hash& file, uint64_t size, bool read_ahead = true);

  // Drops the cached plan (the remote file changed or a fetch URL was refused).
  void Forget(const Hash& file);

  uint64_t reconstruction_requests() const;
  Stats stats() const;

 private:
  class Impl;
  class StreamImpl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace xet
