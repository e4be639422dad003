#include "client/download/downloader.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "client/cache/chunk_cache.h"
#include "client/download/block_planner.h"
#include "client/download/download_block.h"
#include "client/download/download_transfer.h"
#include "client/download/part_file.h"
#include "format/merkle.h"

namespace xet {
namespace {

// Blocks planned ahead of the oldest unfinished one.
constexpr size_t kBlockWindow = 2;
// Streaming (DownloadRange) plans in smaller blocks, kStreamWindow of them ahead of the
// sink: their decoded bytes wait in memory until the sink takes them. Small blocks keep
// that memory small, and in a fresh process every new page costs a fault and zeroing (in
// a VM more than hashing the bytes); 8 MiB x 4 was the fastest and smallest setting
// measured (docs/bench-log/client.md).
constexpr uint64_t kStreamBlockBytes = 8ull << 20;
constexpr uint64_t kMinStreamBlockBytes = 1ull << 20;

struct DownloadContext {
  CasClient& cas;
  DownloadOptions options;
  std::unique_ptr<ChunkCache> cache;
  Status cache_status;

  DownloadContext(CasClient& c, DownloadOptions o) : cas(c), options(std::move(o)) {
    if (options.fetch_concurrency == 0) {
      const size_t cores = std::max(1u, std::thread::hardware_concurrency());
      options.fetch_concurrency = std::clamp<size_t>(2 * cores, 4, 16);
    }
    if (!options.chunk_cache_dir.empty()) {
      auto opened = ChunkCache::Open(options.chunk_cache_dir, options.chunk_cache_bytes);
      if (opened.ok()) {
        cache = std::move(*opened);
      } else {
        cache_status = opened.status();
      }
    }
  }
};

Status DownloadFileImpl(DownloadContext& d, const Hash& file_hash, uint64_t size,
                        const std::string& dest) {
  if (!d.cache_status.ok()) return d.cache_status;
  const uint64_t block_bytes = std::max<uint64_t>(1, d.options.block_bytes);
  XET_ASSIGN_OR_RETURN(auto part, PartFile::Open(dest, file_hash, size, block_bytes));
  TransferStats* stats = d.options.stats;
  if (stats) stats->bytes_total += size;
  if (size > 0) {
    const auto blocks = SplitBlocks(0, size - 1, block_bytes);
    Status failure;
    std::vector<std::tuple<Hash, uint32_t, uint32_t>> cache_keys;
    {
      DownloadTransfer transfer(d.cas, d.options, d.cache.get(), DownloadTransfer::Mode::kFile,
                                part.get());
      size_t next = 0;
      for (;;) {
        while (next < blocks.size() && transfer.blocks_in_flight() < kBlockWindow) {
          if (part->IsDone(next)) {
            if (stats) stats->bytes_done += blocks[next].size();
            ++next;
            continue;
          }
          auto started = transfer.StartBlock(file_hash, next, blocks[next]);
          if (!started.ok()) {
            transfer.Fail(started.status());
            break;
          }
          ++next;
        }
        if (transfer.blocks_in_flight() == 0) break;
        DownloadBlock* done = transfer.WaitAnyBlock();
        if (done == nullptr) break;
        // Each completed block is made durable for resume while the workers go on with the
        // next: the flush also keeps the data still to be flushed by Commit small (a flush
        // costs in proportion to what was written since the last one). The block that
        // completes the file is made durable by Commit, with the rest.
        part->RecordDone(done->index, BlockChunks(*done));
        const bool completes = next == blocks.size() && transfer.blocks_in_flight() == 1;
        Status st = completes ? Status::Ok() : part->Checkpoint();
        transfer.Release(done);
        if (!st.ok()) {
          transfer.Fail(st);
          break;
        }
      }
      failure = transfer.error();
      transfer.Drain();
      cache_keys = transfer.cache_keys();
    }  // workers joined
    if (!failure.ok()) {
      // Keep a partial file only when there is something to resume; save what is.
      if (part->sidecar().done.empty() || !part->Checkpoint().ok()) part->Discard();
      return failure;
    }
    const Hash got = FileHash(part->AllChunks());
    if (got != file_hash) {
      part->Discard();
      if (d.cache) {
        for (const auto& [x, s, e] : cache_keys) d.cache->Erase(x, s, e);
      }
      return Status::Corruption("downloaded file hashes to " + got.ToHex() + ", expected " +
                                file_hash.ToHex() + "; nothing written to " + dest);
    }
  } else if (!file_hash.IsZero()) {
    part->Discard();
    return Status::Corruption("a file of size 0 must have the zero hash, not " + file_hash.ToHex());
  }
  XET_RETURN_IF_ERROR(part->Commit());
  if (stats) stats->files_done += 1;
  return Status::Ok();
}

// Streams bytes [first, last] to `sink`. With `streamed_hash` (only for a whole file), the
// workers hash every chunk, and the Xet hash of the streamed bytes is stored there.
Status DownloadRangeImpl(DownloadContext& d, const Hash& file_hash, uint64_t first, uint64_t last,
                         const std::function<bool(std::string_view)>& sink,
                         Hash* streamed_hash = nullptr) {
  const bool verify = streamed_hash != nullptr;
  if (!d.cache_status.ok()) return d.cache_status;
  if (last < first) return Status::InvalidArgument("DownloadRange: last < first");
  const uint64_t block_bytes = std::max<uint64_t>(
      1, std::min(d.options.block_bytes, std::clamp(d.options.max_bytes_in_flight / 8,
                                                    kMinStreamBlockBytes, kStreamBlockBytes)));
  const auto blocks = SplitBlocks(first, last, block_bytes);
  DownloadTransfer transfer(d.cas, d.options, d.cache.get(), DownloadTransfer::Mode::kStream,
                            nullptr, verify);
  std::vector<ChunkInfo> chunks;  // verify: the file's chunks, in order
  std::deque<DownloadBlock*> order;
  size_t next = 0;
  Status failure;
  for (;;) {
    while (next < blocks.size() && order.size() < kStreamWindow) {
      auto started = transfer.StartBlock(file_hash, next, blocks[next]);
      if (!started.ok()) {
        transfer.Fail(started.status());
        break;
      }
      order.push_back(*started);
      ++next;
    }
    if (order.empty()) break;
    DownloadBlock* b = order.front();
    bool ok = true;
    for (size_t t = 0; t < b->plan.terms.size() && ok; ++t) {
      if (b->plan.terms[t].take == 0) continue;
      ok = transfer.WaitTerm(b, t);
      if (!ok) break;
      UninitializedBytes bytes = std::move(b->term_bytes[t]);  // the worker is done with it
      if (!sink(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()))) {
        transfer.Fail(Status::Cancelled("the receiver stopped the download"));
        ok = false;
      }
      transfer.RecycleTermBuffer(std::move(bytes));
    }
    if (!ok || !transfer.WaitBlock(b)) break;
    if (verify) {
      const std::vector<ChunkInfo> block_chunks = BlockChunks(*b);
      chunks.insert(chunks.end(), block_chunks.begin(), block_chunks.end());
    }
    order.pop_front();
    transfer.Release(b);
  }
  failure = transfer.error();
  transfer.Drain();
  if (failure.ok() && verify) *streamed_hash = FileHash(chunks);
  return failure;
}

}  // namespace

struct Downloader::Impl : DownloadContext {
  using DownloadContext::DownloadContext;
};

Downloader::Downloader(CasClient& cas, DownloadOptions options)
    : impl_(std::make_unique<Impl>(cas, std::move(options))) {}
Downloader::~Downloader() = default;

Status Downloader::DownloadToFile(const Hash& file_hash, uint64_t size, const std::string& dest) {
  return DownloadFileImpl(*impl_, file_hash, size, dest);
}

Status Downloader::DownloadRange(const Hash& file_hash, uint64_t first, uint64_t last,
                                 const std::function<bool(std::string_view)>& sink) {
  return DownloadRangeImpl(*impl_, file_hash, first, last, sink);
}

Result<Hash> Downloader::DownloadToSink(const Hash& file_hash, uint64_t size,
                                        const std::function<bool(std::string_view)>& sink) {
  if (size == 0) return Hash{};  // the empty file's hash is all zeros
  Hash streamed;
  XET_RETURN_IF_ERROR(DownloadRangeImpl(*impl_, file_hash, 0, size - 1, sink, &streamed));
  return streamed;
}

}  // namespace xet
