// Downloader: reconstructs Xet files from a CAS server into local files or streams.
//
// Plans with /v2/reconstructions in blocks of `block_bytes` of the file, fetches the xorb
// ranges of a block in parallel (`fetch_concurrency` in flight; multi-range GETs, falling
// back to single ranges), checks every chunk record and term length, decompresses and
// hashes the chunks one at a time, reuses a fetched chunk for every term that needs it, and
// writes term bytes at their file offsets (pwritev) as their chunks are decoded; the file's
// Xet hash, from the chunk hashes, is checked before anything is renamed into place (cache
// entries are checked chunk by chunk against the hashes stored with them). Files are
// written to "<dest>.xetpart" and renamed over `dest` only when complete and fsync'd, so an
// interrupted download never leaves a half-written destination; an existing .xetpart with
// a matching sidecar resumes (only the missing blocks are fetched). An optional on-disk
// chunk cache (bounded, LRU by access) serves repeated downloads without network.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "client/cas/cas_client.h"
#include "client/transfer_stats.h"
#include "common/result.h"
#include "format/hash.h"

namespace xet {

// Memory: chunks are decompressed one at a time and written as they are decoded (through
// two 8 MiB page-aligned staging buffers per worker, one filling while the other is written;
// whole pages with O_DIRECT where the file
// system allows it, so a download does not fill the page cache). A fetch of one range, and
// a chunk-cache read, is decoded as its bytes stream in and holds no copy of the range;
// only fetches that group several small ranges into one multi-range request buffer their
// answer. So what a download holds is
//   - answer buffers of the multi-range fetches: at most `max_bytes_in_flight` in all,
//     running fetches' and idle ones kept for reuse alike (each fetch reserves its
//     requested byte span before it starts; such fetches are capped at
//     max_bytes_in_flight / (2 * fetch_concurrency), 32 MiB at most);
//   - per worker: the two staging buffers, a 1 MiB cache read buffer, one decoded chunk
//     (<= 128 KiB) and one record split across received pieces (<= 256 KiB);
//   - the plans of the blocks in progress (two; four when streaming: terms and fetch
//     URLs, not data) and the (hash, size) of every chunk of the file (40 bytes each, for
//     the final hash check);
//   - DownloadRange and DownloadToSink only: the decoded bytes of up to four planning
//     blocks of min(block_bytes, max_bytes_in_flight / 8 clamped to [1 MiB, 8 MiB]) bytes
//     each (plus one the sink is taking),
//     until the sink takes them.
// A block's bytes are released as soon as they are written (or handed to the sink), and
// every buffer when the call returns.
struct DownloadOptions {
  // Fetches in flight, each decoded, hashed and written by its own worker thread. 0 = two
  // per core, 4 to 16: more workers than that share the cores with the server and only add
  // switching (measured in docs/bench-log/client.md).
  size_t fetch_concurrency = 0;
  uint64_t max_bytes_in_flight = 256ull << 20;  // buffered answer bytes at once, see above
  uint64_t block_bytes = 256ull << 20;          // reconstruction planning granularity
  std::string chunk_cache_dir;                  // "" = no cache
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

  // Streams bytes [first, last] (inclusive) of the file, in order, to `sink`. Each chunk's
  // framing and length are checked; chunk hashes are not (a range has no hash to check).
  Status DownloadRange(const Hash& file_hash, uint64_t first, uint64_t last,
                       const std::function<bool(std::string_view)>& sink);

  // Streams the whole file (`size` bytes, from the listing), in order, to `sink`, hashing
  // every chunk on the fetch workers as DownloadToFile does, and returns the Xet hash of the
  // bytes streamed. The caller must compare it with `file_hash`: a mismatch (corrupted data)
  // is known only after the sink has taken every byte, so the receiver must treat what it
  // got as void unless the hashes match.
  Result<Hash> DownloadToSink(const Hash& file_hash, uint64_t size,
                              const std::function<bool(std::string_view)>& sink);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace xet
