#include "client/download/downloader.h"

#include <sys/uio.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "client/cache/chunk_cache.h"
#include "client/download/block_planner.h"
#include "client/download/part_file.h"
#include "common/buffer_pool.h"
#include "common/first_error.h"
#include "common/huge_pages.h"
#include "common/side_thread.h"
#include "common/uninitialized_buffer.h"
#include "common/worker_group.h"
#include "format/compression.h"
#include "format/keyed_hash.h"
#include "format/merkle.h"
#include "format/xorb.h"

namespace xet {
namespace {

// Largest FetchRanges call built from several ranges (a single larger range is one call).
constexpr uint64_t kMaxTaskBytes = 32ull << 20;
// Blocks planned ahead of the oldest unfinished one.
constexpr size_t kBlockWindow = 2;
// Streaming (DownloadRange) plans in smaller blocks, kStreamWindow of them ahead of the
// sink: their decoded bytes wait in memory until the sink takes them. Small blocks keep
// that memory small, and in a fresh process every new page costs a fault and zeroing (in
// this project's VMs more than hashing the bytes). 200 MB to /dev/null from a warm server,
// 8 runs alternated: 32 MiB x 2 median 124 ms (109-194, RSS 116 MB), 16 MiB x 4 119 ms,
// 8 MiB x 4 112 ms (107-132, RSS 60 MB) (docs/BENCHMARKS.md).
constexpr uint64_t kStreamBlockBytes = 8ull << 20;
constexpr size_t kStreamWindow = 4;
constexpr uint64_t kMinStreamBlockBytes = 1ull << 20;
// Per worker, twice (one buffer fills while the other is written): decoded bytes are copied
// here on their way to the file, so a worker never holds more than one decoded chunk plus
// twice this much of decoded data. A/B of 1 GB downloads on this 2-core machine, with the
// two buffers: 8 MiB 0.97-1.07 s median, 4 MiB 1.07-1.12, 16 MiB 1.18 (docs/BENCHMARKS.md).
constexpr size_t kStagingBytes = 8u << 20;
// Largest record payload accepted from a streamed range (a stored chunk is at most
// kXorbMaxChunkSize; an LZ4 frame of one is barely larger): bounds StreamRange's pending
// record.
constexpr size_t kMaxStreamedPayload = 2 * kXorbMaxChunkSize;
// Per worker: chunk cache entries are read in pieces of this size.
constexpr size_t kCacheReadBytes = 1u << 20;
// New answer buffers are sized in multiples of this (a huge page).
constexpr uint64_t kBufferGranule = 2ull << 20;

uint64_t RoundUp(uint64_t n, uint64_t granule) { return (n + granule - 1) / granule * granule; }

// The compressed bytes of one task as fetched: its whole byte span (a single-range answer
// covering several ranges holds the gaps too).
uint64_t TaskSpanBytes(const FetchEntry& entry, const FetchTask& task) {
  uint64_t lo = UINT64_MAX, hi = 0;
  for (uint32_t r = task.first_range; r <= task.last_range; ++r) {
    lo = std::min(lo, entry.ranges[r].byte_start);
    hi = std::max(hi, entry.ranges[r].byte_end);
  }
  return hi >= lo ? hi - lo + 1 : 0;
}

struct BlockState {
  uint64_t index = 0;
  Reconstruction recon;
  BlockPlan plan;
  size_t tasks_left = 0;
  // DownloadToFile and verified streams: the chunks of each term, from its decoded range.
  std::vector<std::vector<ChunkInfo>> term_chunks;
  // Streaming: the written part of each term, and whether it is ready.
  std::vector<UninitializedBytes> term_bytes;
  std::vector<uint8_t> term_ready;
};

// Gathers the decoded bytes of a range's contiguous runs in a page-aligned staging buffer
// and writes them out: whole pages with O_DIRECT (no page-cache copy; in this guest filling
// fresh page-cache pages cost more than everything else together), the partial pages at a
// run's ends through the page cache (the neighbouring run, written by another task, fills
// the rest of such a page). Byte i of a staging buffer is file offset base_ + i, so whole
// file pages are whole buffer pages. Two buffers: a full one is written on the writer's
// own thread while the worker fills the other, so the worker does not wait for the disk
// (it blocked ~0.27 s per GB in pwrite before). Flush() ends the current run and returns
// once all of it is written; Settle() waits for a write still in progress (every task
// ends with it, so no write outlives its task or its file).
class StagedWriter {
 public:
  StagedWriter() : staging_{PageAlignedBuffer(kStagingBytes), PageAlignedBuffer(kStagingBytes)} {}

  void Reset(PartFile* part) {
    (void)Settle();
    part_ = part;
    active_ = false;
  }

  Status Write(uint64_t offset, std::span<const uint8_t> bytes) {
    if (staging_[0].data() == nullptr || staging_[1].data() == nullptr) {
      // no mapping: write straight through
      const iovec v{const_cast<uint8_t*>(bytes.data()), bytes.size()};
      return part_->WriteAt(std::span<const iovec>(&v, 1), offset);
    }
    if (active_ && offset != base_ + hi_) XET_RETURN_IF_ERROR(Flush());
    if (!active_) {
      base_ = offset - offset % kAlign;
      lo_ = hi_ = static_cast<size_t>(offset - base_);
      active_ = true;
    }
    while (!bytes.empty()) {
      const size_t n = std::min(bytes.size(), kStagingBytes - hi_);
      std::memcpy(staging_[cur_].data() + hi_, bytes.data(), n);
      hi_ += n;
      bytes = bytes.subspan(n);
      if (hi_ == kStagingBytes) {
        XET_RETURN_IF_ERROR(WriteOut());
        base_ += kStagingBytes;
        lo_ = hi_ = 0;
      }
    }
    return Status::Ok();
  }

  Status Flush() {
    Status st = active_ ? WriteOut() : Status::Ok();
    active_ = false;
    Status settled = Settle();
    return st.ok() ? settled : st;
  }

  // Waits for the write in progress, if any; returns its outcome.
  Status Settle() {
    if (!pending_) return Status::Ok();
    writer_.Wait();
    pending_ = false;
    return std::exchange(pending_status_, Status::Ok());
  }

 private:
  static constexpr size_t kAlign = PartFile::kDirectAlign;

  // Starts writing the current buffer's [lo_, hi_) on the writer thread and switches to
  // the other buffer (once its own write is done).
  Status WriteOut() {
    XET_RETURN_IF_ERROR(Settle());
    writer_.Start([this, part = part_, data = staging_[cur_].data(), base = base_, lo = lo_,
                   hi = hi_] { pending_status_ = WriteRun(*part, data, base, lo, hi); });
    pending_ = true;
    cur_ ^= 1;
    return Status::Ok();
  }

  // Writes data[lo, hi) at file offset base + lo: its whole pages aligned, the partial
  // ones buffered.
  static Status WriteRun(PartFile& part, const uint8_t* data, uint64_t base, size_t lo, size_t hi) {
    const size_t first_page = (lo + kAlign - 1) / kAlign * kAlign;
    const size_t last_page = hi / kAlign * kAlign;
    auto buffered = [&](size_t from, size_t to) {
      if (from >= to) return Status::Ok();
      const iovec v{const_cast<uint8_t*>(data) + from, to - from};
      return part.WriteAt(std::span<const iovec>(&v, 1), base + from);
    };
    if (first_page >= last_page) return buffered(lo, hi);
    XET_RETURN_IF_ERROR(buffered(lo, first_page));
    XET_RETURN_IF_ERROR(part.WriteAlignedAt(
        std::span<const uint8_t>(data + first_page, last_page - first_page), base + first_page));
    return buffered(last_page, hi);
  }

  PartFile* part_ = nullptr;
  PageAlignedBuffer staging_[2];
  size_t cur_ = 0;  // the buffer being filled
  bool active_ = false;
  uint64_t base_ = 0;       // file offset of staging_[cur_][0] (page aligned)
  size_t lo_ = 0, hi_ = 0;  // the run's bytes in staging_[cur_]
  bool pending_ = false;    // a write on writer_ not yet settled
  Status pending_status_;   // its outcome (written by writer_, read after Wait)
  SideThread writer_;       // last: joined first, while the buffers live
};

// What one worker thread reuses from range to range.
struct WorkerScratch {
  ChunkCodec codec;
  std::vector<uint8_t> chunk = std::vector<uint8_t>(kXorbMaxChunkSize);
  StagedWriter writer;
  struct Rec {
    size_t payload;
    uint32_t csize, usize;
    uint8_t scheme;
  };
  std::vector<Rec> recs;
  std::vector<ChunkInfo> infos;
  std::vector<uint32_t> order;   // positions in RangeRef::terms, by first chunk
  std::vector<uint64_t> seen;    // per position: bytes of the term's chunks decoded so far
  std::vector<uint32_t> active;  // positions whose chunks are being decoded
  size_t next_term = 0;          // in `order`: the first term not yet active
  const std::vector<ChunkInfo>* expected = nullptr;
  bool hash = false;
  std::vector<uint8_t> pending;  // DecodeStreamed: a record split across pieces
  // Chunk cache reads only: sized (kCacheReadBytes) at the first one. Zero-filling it up
  // front cost every download its pages (a fresh page is a host fault in this guest).
  std::vector<uint8_t> read_buffer;
};

// Walks the chunk records of a fetched range: checks every header and that exactly
// `num_chunks` records fill `bytes`. Fills `s.recs`.
Status ParseRecords(std::span<const uint8_t> bytes, uint32_t num_chunks, WorkerScratch& s) {
  s.recs.clear();
  s.recs.reserve(num_chunks);
  size_t off = 0;
  for (uint32_t i = 0; i < num_chunks; ++i) {
    if (bytes.size() - off < kXorbChunkHeaderSize) {
      return Status::Corruption("fetched range ends inside chunk " + std::to_string(i) + " of " +
                                std::to_string(num_chunks));
    }
    const XorbChunkHeader h = DecodeXorbChunkHeader(bytes.subspan(off));
    if (h.version != kXorbChunkHeaderVersion || !IsKnownCompressionScheme(h.scheme) ||
        h.uncompressed_size == 0 || h.uncompressed_size > kXorbMaxChunkSize ||
        bytes.size() - off - kXorbChunkHeaderSize < h.compressed_size) {
      return Status::Corruption("fetched range: malformed chunk record " + std::to_string(i) +
                                " at offset " + std::to_string(off));
    }
    const size_t payload = off + kXorbChunkHeaderSize;
    if (static_cast<CompressionScheme>(h.scheme) == CompressionScheme::kNone &&
        h.compressed_size != h.uncompressed_size) {
      return Status::Corruption("fetched range: stored chunk " + std::to_string(i) +
                                " has mismatched sizes");
    }
    s.recs.push_back({payload, h.compressed_size, h.uncompressed_size, h.scheme});
    off = payload + h.compressed_size;
  }
  if (off != bytes.size()) {
    return Status::Corruption("fetched range has " + std::to_string(bytes.size() - off) +
                              " bytes after its " + std::to_string(num_chunks) + " chunks");
  }
  return Status::Ok();
}

// The chunks of `block` that start inside its span, in file order.
std::vector<ChunkInfo> BlockChunks(const BlockState& b) {
  std::vector<ChunkInfo> out;
  for (size_t ti = 0; ti < b.plan.terms.size(); ++ti) {
    const TermPlacement& p = b.plan.terms[ti];
    uint64_t pos = p.data_offset;
    for (const ChunkInfo& c : b.term_chunks[ti]) {
      if (pos >= b.plan.span.first && pos <= b.plan.span.last) out.push_back(c);
      pos += c.size;
    }
  }
  return out;
}

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

// One download: the worker threads, the task queue, the in-flight byte budget and the
// first error. Workers are joined by the destructor on every path.
class Transfer {
 public:
  enum class Mode { kFile, kStream };

  // `hash_chunks`: in kStream mode, also hash every chunk and keep the hashes with their
  // term (always done in kFile mode), so the caller can check the file hash.
  Transfer(CasClient& cas, const DownloadOptions& options, ChunkCache* cache, Mode mode,
           PartFile* part, bool hash_chunks = false)
      : cas_(cas),
        options_(options),
        cache_(cache),
        mode_(mode),
        hash_chunks_(mode == Mode::kFile || hash_chunks),
        part_(part),
        budget_(std::max<uint64_t>(1, options.max_bytes_in_flight)),
        max_task_bytes_(std::clamp<uint64_t>(
            budget_ / (2 * std::max<size_t>(1, options.fetch_concurrency)), 1, kMaxTaskBytes)),
        workers_(std::max<size_t>(1, options.fetch_concurrency), [this] { WorkerLoop(); }) {}
  ~Transfer() {
    {
      std::lock_guard lock(mu_);
      closing_ = true;
    }
    cv_.notify_all();
    workers_.Join();
  }
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;

  // Plans `span` (block `index`) and queues its fetch tasks.
  Result<BlockState*> StartBlock(const Hash& file_hash, uint64_t index, const ByteSpan& span) {
    auto state = std::make_unique<BlockState>();
    state->index = index;
    XET_ASSIGN_OR_RETURN(state->recon,
                         cas_.GetReconstruction(file_hash, std::make_pair(span.first, span.last)));
    XET_ASSIGN_OR_RETURN(state->plan, PlanBlock(state->recon, span, max_task_bytes_));
    const size_t nterms = state->plan.terms.size();
    if (hash_chunks_) state->term_chunks.resize(nterms);
    if (mode_ == Mode::kStream) {
      state->term_bytes.resize(nterms);
      state->term_ready.assign(nterms, 0);
      for (size_t i = 0; i < nterms; ++i) {
        if (state->plan.terms[i].take == 0) state->term_ready[i] = 1;
      }
    }
    BlockState* raw = state.get();
    {
      std::lock_guard lock(mu_);
      raw->tasks_left = raw->plan.tasks.size();
      for (size_t t = 0; t < raw->plan.tasks.size(); ++t) queue_.push_back({raw, t});
      blocks_.push_back(std::move(state));
    }
    cv_.notify_all();
    return raw;
  }

  void Fail(Status st) {
    {
      std::lock_guard lock(mu_);  // a waiter checks errors_ under mu_: no lost wake-up
      errors_.Set(std::move(st));
    }
    cv_.notify_all();
  }
  Status error() { return errors_.status(); }

  // Waits until `block` has no tasks left (or a task failed).
  bool WaitBlock(BlockState* block) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return block->tasks_left == 0 || errors_.failed(); });
    return !errors_.failed();
  }
  // Waits until some block finished (any), returns it (nullptr on failure).
  BlockState* WaitAnyBlock() {
    std::unique_lock lock(mu_);
    BlockState* done = nullptr;
    cv_.wait(lock, [&] {
      if (errors_.failed()) return true;
      for (auto& b : blocks_) {
        if (b->tasks_left == 0) {
          done = b.get();
          return true;
        }
      }
      return false;
    });
    return errors_.failed() ? nullptr : done;
  }
  // Waits until term `t` of `block` is ready (streaming).
  bool WaitTerm(BlockState* block, size_t t) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return block->term_ready[t] != 0 || errors_.failed(); });
    return !errors_.failed();
  }
  // Takes back a term's buffer once the sink is done with it (streaming).
  void RecycleTermBuffer(UninitializedBytes bytes) { term_buffers_.Give(std::move(bytes)); }
  // Drops a finished block.
  void Release(BlockState* block) {
    std::lock_guard lock(mu_);
    std::erase_if(blocks_, [&](const std::unique_ptr<BlockState>& b) { return b.get() == block; });
  }
  size_t blocks_in_flight() {
    std::lock_guard lock(mu_);
    return blocks_.size();
  }
  // Waits for every queued and running task to end (after a failure, before returning).
  void Drain() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return queue_.empty() && running_ == 0; });
  }

  // Cache entries read or written during this transfer (to drop when the file fails).
  std::vector<std::tuple<Hash, uint32_t, uint32_t>> cache_keys() {
    std::lock_guard lock(mu_);
    return cache_keys_;
  }

 private:
  struct Job {
    BlockState* block;
    size_t task;
  };

  void WorkerLoop() {
    WorkerScratch scratch;
    for (;;) {
      Job job{};
      Lease lease;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return closing_ || !queue_.empty(); });
        if (queue_.empty()) return;
        job = queue_.front();
        queue_.pop_front();
        ++running_;
        if (!errors_.failed()) lease = LeaseBuffer(lock, Charge(*job.block, job.task));
      }
      std::vector<std::vector<uint8_t>> dropped;  // freed outside the lock
      Status st = errors_.failed() || !lease.held
                      ? Status::Ok()
                      : RunTask(*job.block, job.task, scratch, lease.buffer);
      // No write of this task may outlive it (a failed task skipped its Flush).
      if (Status w = scratch.writer.Settle(); st.ok()) st = std::move(w);
      {
        std::lock_guard lock(mu_);
        if (lease.held) ReturnBuffer(std::move(lease), dropped);
        --running_;
        --job.block->tasks_left;
        errors_.Set(std::move(st));
      }
      cv_.notify_all();
    }
  }

  // A buffer lent to a running task and the bytes it counts for in held_.
  struct Lease {
    bool held = false;
    bool fresh = false;  // a new buffer, reserved outside the lock
    std::vector<uint8_t> buffer;
    uint64_t counted = 0;
  };

  // Waits (under `lock`) until a buffer for `charge` bytes fits the budget: a free buffer at
  // least that large, or a new one once held_ + charge <= budget_ (free buffers are dropped
  // to make room), or any size when no other task holds one. No lease after a failure.
  Lease LeaseBuffer(std::unique_lock<std::mutex>& lock, uint64_t charge) {
    Lease lease;
    if (charge == 0) {  // a streamed task: no buffer
      lease.held = true;
      return lease;
    }
    std::vector<std::vector<uint8_t>> dropped;
    cv_.wait(lock, [&] {
      if (errors_.failed()) return true;
      // The smallest free buffer that is large enough.
      auto best = free_.end();
      for (auto it = free_.begin(); it != free_.end(); ++it) {
        if (it->capacity() >= charge &&
            (best == free_.end() || it->capacity() < best->capacity())) {
          best = it;
        }
      }
      if (best != free_.end()) {
        lease.counted = best->capacity();
        lease.buffer = std::move(*best);
        free_.erase(best);
      } else {
        // Drop free buffers, largest first, until a new one fits.
        std::sort(free_.begin(), free_.end(),
                  [](const auto& a, const auto& b) { return a.capacity() < b.capacity(); });
        while (!free_.empty() && held_ + charge > budget_) {
          held_ -= free_.back().capacity();
          dropped.push_back(std::move(free_.back()));
          free_.pop_back();
        }
        if (held_ + charge > budget_ && leased_ > 0) return false;
        // Rounded up (within the budget), so that tasks of about the same size, e.g. whole
        // xorbs, can reuse each other's buffers.
        lease.counted = std::max(
            charge, std::min(RoundUp(charge, kBufferGranule), budget_ - std::min(held_, budget_)));
        held_ += lease.counted;
        lease.fresh = true;
      }
      lease.held = true;
      ++leased_;
      return true;
    });
    lock.unlock();
    dropped.clear();
    if (lease.fresh) {
      lease.buffer.reserve(lease.counted);
      AdviseHugePages(lease.buffer.data(), lease.buffer.capacity());
    }
    lock.lock();
    return lease;
  }

  // Takes a buffer back (under mu_): it is kept for the next task unless that would exceed
  // the budget.
  void ReturnBuffer(Lease lease, std::vector<std::vector<uint8_t>>& dropped) {
    if (lease.counted == 0 && lease.buffer.capacity() == 0) return;  // a streamed task
    --leased_;
    held_ = held_ - lease.counted + lease.buffer.capacity();
    if (held_ > budget_ || errors_.failed()) {
      held_ -= lease.buffer.capacity();
      dropped.push_back(std::move(lease.buffer));
    } else {
      free_.push_back(std::move(lease.buffer));
    }
  }

  // What a task holds while it runs: its fetched bytes (or the cached copy of one of its
  // ranges, which is smaller). Streaming also keeps the decoded bytes of its terms until the
  // sink has them; those are bounded by the block window instead.
  uint64_t Charge(const BlockState& b, size_t task_index) const {
    const FetchTask& task = b.plan.tasks[task_index];
    if (task.refs.size() == 1) return 0;  // streamed through (RunStreamedTask)
    return TaskSpanBytes(b.recon.xorbs[task.xorb].second[task.entry], task);
  }

  Status RunTask(BlockState& b, size_t task_index, WorkerScratch& scratch,
                 std::vector<uint8_t>& buffer) {
    const FetchTask& task = b.plan.tasks[task_index];
    const auto& xorb = b.recon.xorbs[task.xorb];
    const FetchEntry& entry = xorb.second[task.entry];
    if (task.refs.size() == 1) {
      return RunStreamedTask(b, b.plan.ranges[task.refs[0]], entry, xorb.first, scratch);
    }
    // Ranges served by the cache.
    std::vector<uint8_t> cached(task.refs.size(), 0);
    if (cache_ != nullptr) {
      for (size_t i = 0; i < task.refs.size(); ++i) {
        const RangeRef& ref = b.plan.ranges[task.refs[i]];
        const FetchRange& fr = entry.ranges[ref.range];
        ChunkCache::Entry hit;
        hit.records = std::move(buffer);
        const bool found = cache_->GetInto(xorb.first, fr.chunk_start, fr.chunk_end, hit);
        // A damaged entry is detected while it is decoded; the fetch below then rewrites
        // every byte it had written.
        Status st = found ? ProcessRange(b, ref, fr.chunk_end - fr.chunk_start, hit.records,
                                         &hit.chunks, scratch)
                          : Status::NotFound("");
        buffer = std::move(hit.records);
        if (!found) continue;
        if (!st.ok()) {
          cache_->Erase(xorb.first, fr.chunk_start, fr.chunk_end);  // damaged: fetch instead
          continue;
        }
        RememberCacheKey(xorb.first, fr);
        if (options_.stats) options_.stats->bytes_from_cache += buffer.size();
        cached[i] = 1;
      }
    }
    // The rest, in runs of consecutive ranges: one FetchRanges call per run.
    for (size_t i = 0; i < task.refs.size();) {
      if (cached[i]) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j + 1 < task.refs.size() && !cached[j + 1]) ++j;
      const size_t first = task.first_range + i;
      const size_t last = task.first_range + j;
      Status fetched = cas_.FetchRanges(
          entry, first, last,
          [&](size_t r, std::span<const uint8_t> bytes) -> Status {
            if (errors_.failed()) return Status::Cancelled("download stopped");
            if (r < first || r > last) return Status::Internal("FetchRanges: unexpected range");
            const RangeRef& ref = b.plan.ranges[task.refs[r - task.first_range]];
            const FetchRange& fr = entry.ranges[ref.range];
            if (options_.stats) options_.stats->bytes_received += bytes.size();
            XET_RETURN_IF_ERROR(
                ProcessRange(b, ref, fr.chunk_end - fr.chunk_start, bytes, nullptr, scratch));
            if (cache_ != nullptr && mode_ == Mode::kFile) {
              // Only whole-file downloads insert: their file hash vouches for the chunks
              // (entries are dropped again if it does not match).
              if (cache_->Put(xorb.first, fr.chunk_start, fr.chunk_end, bytes, scratch.infos)
                      .ok()) {
                RememberCacheKey(xorb.first, fr);
              }
            }
            return Status::Ok();
          },
          &buffer);
      XET_RETURN_IF_ERROR(fetched);
      i = j + 1;
    }
    return Status::Ok();
  }

  void RememberCacheKey(const Hash& xorb, const FetchRange& fr) {
    std::lock_guard lock(mu_);
    cache_keys_.emplace_back(xorb, fr.chunk_start, fr.chunk_end);
  }

  // Decodes the chunk records of one fetched (or cached) range one chunk at a time and
  // hands every term `ref` serves its bytes: through the staging writer into the part file
  // (kFile) or into the term's buffer (kStream). Checks each chunk's record, each term's
  // length and, with `expected` (a cache entry), each chunk's hash and size. Leaves the
  // range's chunk infos in `s.infos` when they were computed (whole files, or `expected`).
  Status ProcessRange(BlockState& b, const RangeRef& ref, uint32_t num_chunks,
                      std::span<const uint8_t> bytes, const std::vector<ChunkInfo>* expected,
                      WorkerScratch& s) {
    XET_RETURN_IF_ERROR(ParseRecords(bytes, num_chunks, s));
    XET_RETURN_IF_ERROR(BeginRange(b, ref, num_chunks, expected, s));
    for (uint32_t i = 0; i < num_chunks; ++i) {
      const WorkerScratch::Rec& r = s.recs[i];
      XET_RETURN_IF_ERROR(DecodeChunk(b, ref, i, r, bytes.subspan(r.payload, r.csize), s));
    }
    return FinishRange(b, ref, s);
  }

  using PieceSink = std::function<Status(std::span<const uint8_t>)>;

  // The same for a range whose records arrive in pieces: `source` hands them, in order, to
  // the sink it is given. Records split across pieces are reassembled in `s.pending` (one
  // record at most).
  Status DecodeStreamed(BlockState& b, const RangeRef& ref, uint32_t num_chunks,
                        uint64_t range_bytes, const std::vector<ChunkInfo>* expected,
                        WorkerScratch& s, const std::function<Status(const PieceSink&)>& source) {
    XET_RETURN_IF_ERROR(BeginRange(b, ref, num_chunks, expected, s));
    s.pending.clear();
    uint32_t next = 0;      // chunk index of the next record
    uint64_t consumed = 0;  // range bytes consumed so far (whole records + pending)
    auto record = [&](std::span<const uint8_t> rec) -> Status {
      const XorbChunkHeader h = DecodeXorbChunkHeader(rec);
      const WorkerScratch::Rec r{kXorbChunkHeaderSize, h.compressed_size, h.uncompressed_size,
                                 h.scheme};
      return DecodeChunk(b, ref, next++, r, rec.subspan(kXorbChunkHeaderSize, h.compressed_size),
                         s);
    };
    // The length of the record whose header starts `header`, at range offset `at`, after
    // checking the header.
    auto record_size = [&](std::span<const uint8_t> header, uint64_t at) -> Result<size_t> {
      if (next >= num_chunks) {
        return Status::Corruption("fetched range has " + std::to_string(range_bytes - at) +
                                  " bytes after its " + std::to_string(num_chunks) + " chunks");
      }
      const XorbChunkHeader h = DecodeXorbChunkHeader(header);
      if (h.version != kXorbChunkHeaderVersion || !IsKnownCompressionScheme(h.scheme) ||
          h.uncompressed_size == 0 || h.uncompressed_size > kXorbMaxChunkSize ||
          h.compressed_size > kMaxStreamedPayload ||
          range_bytes - at - kXorbChunkHeaderSize < h.compressed_size ||
          (static_cast<CompressionScheme>(h.scheme) == CompressionScheme::kNone &&
           h.compressed_size != h.uncompressed_size)) {
        return Status::Corruption("fetched range: malformed chunk record " + std::to_string(next) +
                                  " at offset " + std::to_string(at));
      }
      return kXorbChunkHeaderSize + size_t{h.compressed_size};
    };
    const PieceSink decode = [&](std::span<const uint8_t> in) -> Status {
      if (errors_.failed()) return Status::Cancelled("download stopped");
      if (in.size() > range_bytes - consumed) {
        return Status::Corruption("fetched range longer than its " + std::to_string(range_bytes) +
                                  " bytes");
      }
      while (!in.empty()) {
        if (!s.pending.empty()) {
          // Complete the header, then the record, from `in`.
          auto append = [&](size_t want) {
            const size_t take = std::min(want - s.pending.size(), in.size());
            s.pending.insert(s.pending.end(), in.begin(),
                             in.begin() + static_cast<ptrdiff_t>(take));
            in = in.subspan(take);
            consumed += take;
            return s.pending.size() == want;
          };
          if (s.pending.size() < kXorbChunkHeaderSize && !append(kXorbChunkHeaderSize)) continue;
          XET_ASSIGN_OR_RETURN(const size_t need,
                               record_size(s.pending, consumed - s.pending.size()));
          if (!append(need)) continue;  // `in` is used up
          XET_RETURN_IF_ERROR(record(s.pending));
          s.pending.clear();
          continue;
        }
        if (in.size() >= kXorbChunkHeaderSize) {
          XET_ASSIGN_OR_RETURN(const size_t size, record_size(in, consumed));
          if (in.size() >= size) {
            XET_RETURN_IF_ERROR(record(in.first(size)));
            in = in.subspan(size);
            consumed += size;
            continue;
          }
        }
        s.pending.assign(in.begin(), in.end());  // an incomplete record
        consumed += in.size();
        in = {};
      }
      return Status::Ok();
    };
    XET_RETURN_IF_ERROR(source(decode));
    if (!s.pending.empty() || next != num_chunks || consumed != range_bytes) {
      return Status::Corruption("fetched range ends inside chunk " + std::to_string(next) + " of " +
                                std::to_string(num_chunks));
    }
    return FinishRange(b, ref, s);
  }

  // A task of one range: from the chunk cache when it has the range intact, else streamed
  // from the server (and, for whole files, into the cache as it arrives).
  Status RunStreamedTask(BlockState& b, const RangeRef& ref, const FetchEntry& entry,
                         const Hash& xorb, WorkerScratch& s) {
    const FetchRange& fr = entry.ranges[ref.range];
    const uint32_t num_chunks = fr.chunk_end - fr.chunk_start;
    if (cache_ != nullptr) {
      if (auto reader = cache_->OpenEntry(xorb, fr.chunk_start, fr.chunk_end)) {
        // A damaged entry is detected while it is decoded; the fetch below then rewrites
        // every byte it had written.
        if (s.read_buffer.empty()) s.read_buffer.resize(kCacheReadBytes);
        Status st = DecodeStreamed(
            b, ref, num_chunks, reader->records_bytes(), &reader->chunks(), s,
            [&](const PieceSink& sink) { return reader->ReadRecords(s.read_buffer, sink); });
        if (st.ok()) {
          RememberCacheKey(xorb, fr);
          if (options_.stats) options_.stats->bytes_from_cache += reader->records_bytes();
          return Status::Ok();
        }
        if (errors_.failed()) return st;
        cache_->Erase(xorb, fr.chunk_start, fr.chunk_end);  // damaged: fetch instead
      }
    }
    const uint64_t range_bytes = fr.byte_end - fr.byte_start + 1;
    std::unique_ptr<ChunkCache::Writer> cache_entry;
    if (cache_ != nullptr && mode_ == Mode::kFile) {
      // Only whole-file downloads insert: their file hash vouches for the chunks (entries
      // are dropped again if it does not match).
      auto started = cache_->StartPut(xorb, fr.chunk_start, fr.chunk_end, range_bytes);
      if (started.ok()) cache_entry = std::move(*started);
    }
    XET_RETURN_IF_ERROR(
        DecodeStreamed(b, ref, num_chunks, range_bytes, nullptr, s, [&](const PieceSink& sink) {
          return cas_.StreamRange(entry, ref.range, [&](std::span<const uint8_t> in) -> Status {
            if (options_.stats) options_.stats->bytes_received += in.size();
            if (cache_entry && !cache_entry->Append(in).ok()) cache_entry.reset();  // not cached
            return sink(in);
          });
        }));
    if (cache_entry && cache_entry->Commit(s.infos).ok()) RememberCacheKey(xorb, fr);
    return Status::Ok();
  }

  Status BeginRange(BlockState& b, const RangeRef& ref, uint32_t num_chunks,
                    const std::vector<ChunkInfo>* expected, WorkerScratch& s) {
    if (expected != nullptr && expected->size() != num_chunks) {
      return Status::Corruption("cached range has a different number of chunks");
    }
    const size_t nterms = ref.terms.size();
    s.order.resize(nterms);
    s.seen.assign(nterms, 0);
    s.active.clear();
    for (uint32_t k = 0; k < nterms; ++k) {
      const uint32_t ti = ref.terms[k];
      const TermPlacement& p = b.plan.terms[ti];
      if (static_cast<size_t>(p.chunk_offset) + p.num_chunks > num_chunks) {
        return Status::Corruption("reconstruction term " + std::to_string(ti) +
                                  " lies outside its fetch range");
      }
      s.order[k] = k;
      if (mode_ == Mode::kStream) {
        UninitializedBytes& bytes = b.term_bytes[ti];
        if (bytes.capacity() < p.take) bytes = term_buffers_.Take(p.take);
        bytes.resize(p.take);
      }
    }
    std::stable_sort(s.order.begin(), s.order.end(), [&](uint32_t x, uint32_t y) {
      return b.plan.terms[ref.terms[x]].chunk_offset < b.plan.terms[ref.terms[y]].chunk_offset;
    });
    s.expected = expected;
    s.hash = hash_chunks_ || expected != nullptr;
    s.infos.clear();
    if (s.hash) s.infos.reserve(num_chunks);
    s.writer.Reset(part_);
    s.next_term = 0;
    return Status::Ok();
  }

  // Chunk `i` of the range (chunks come in order): decompress, hash, hand out its bytes.
  Status DecodeChunk(BlockState& b, const RangeRef& ref, uint32_t i, const WorkerScratch::Rec& r,
                     std::span<const uint8_t> payload, WorkerScratch& s) {
    const size_t nterms = ref.terms.size();
    while (s.next_term < nterms &&
           b.plan.terms[ref.terms[s.order[s.next_term]]].chunk_offset <= i) {
      s.active.push_back(s.order[s.next_term++]);
    }
    const auto scheme = static_cast<CompressionScheme>(r.scheme);
    std::span<const uint8_t> data = payload;
    if (scheme != CompressionScheme::kNone) {
      const std::span<uint8_t> dst(s.chunk.data(), r.usize);
      Status st = s.codec.Decompress(scheme, payload, dst);
      if (!st.ok()) {
        return Status::Corruption("fetched range: chunk " + std::to_string(i) + ": " +
                                  st.message());
      }
      data = dst;
    }
    if (s.hash) {
      s.infos.push_back({ChunkHash(data), data.size()});
      if (s.expected != nullptr && (*s.expected)[i] != s.infos.back()) {
        return Status::Corruption("cached chunk " + std::to_string(i) + " differs");
      }
    }
    for (uint32_t k : s.active) {
      const TermPlacement& p = b.plan.terms[ref.terms[k]];
      const uint64_t pos = s.seen[k];
      s.seen[k] += data.size();
      const uint64_t lo = std::max(pos, p.skip);
      const uint64_t hi = std::min(pos + data.size(), p.skip + p.take);
      if (lo >= hi) continue;
      const auto piece = data.subspan(lo - pos, hi - lo);
      if (mode_ == Mode::kFile) {
        XET_RETURN_IF_ERROR(
            s.writer.Write(b.plan.span.first + p.out_offset + (lo - p.skip), piece));
      } else {
        std::copy(piece.begin(), piece.end(),
                  b.term_bytes[ref.terms[k]].begin() + static_cast<ptrdiff_t>(lo - p.skip));
      }
    }
    std::erase_if(s.active, [&](uint32_t k) {
      const TermPlacement& p = b.plan.terms[ref.terms[k]];
      return p.chunk_offset + p.num_chunks <= i + 1;
    });
    return Status::Ok();
  }

  // After the range's last chunk: write out, check every term's length, publish.
  Status FinishRange(BlockState& b, const RangeRef& ref, WorkerScratch& s) {
    XET_RETURN_IF_ERROR(s.writer.Flush());
    for (uint32_t k = 0; k < ref.terms.size(); ++k) {
      const uint32_t ti = ref.terms[k];
      const TermPlacement& p = b.plan.terms[ti];
      if (s.seen[k] != p.unpacked_length) {
        return Status::Corruption("reconstruction term " + std::to_string(ti) +
                                  ": its chunks hold " + std::to_string(s.seen[k]) +
                                  " bytes, the answer says " + std::to_string(p.unpacked_length));
      }
    }
    for (uint32_t ti : ref.terms) {
      const TermPlacement& p = b.plan.terms[ti];
      if (hash_chunks_) {
        b.term_chunks[ti].assign(s.infos.begin() + p.chunk_offset,
                                 s.infos.begin() + p.chunk_offset + p.num_chunks);
      }
      if (mode_ == Mode::kStream) {
        {
          std::lock_guard lock(mu_);
          b.term_ready[ti] = 1;
        }
        cv_.notify_all();
      }
      if (options_.stats) options_.stats->bytes_done += p.take;
    }
    return Status::Ok();
  }

  CasClient& cas_;
  const DownloadOptions& options_;
  ChunkCache* cache_;
  const Mode mode_;
  const bool hash_chunks_;
  PartFile* part_;
  const uint64_t budget_;          // bytes of running tasks (Charge) at once
  const uint64_t max_task_bytes_;  // FetchRanges calls grouping several ranges
  // Streaming: the decoded-term buffers the sink has consumed, reused for later terms. A
  // term is often a whole block (kStreamBlockBytes), and a new buffer that size is a fresh
  // mapping, faulted in page by page.
  BasicBufferPool<UninitializedBytes> term_buffers_{kStreamWindow + 1};

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  std::vector<std::unique_ptr<BlockState>> blocks_;
  size_t running_ = 0;
  // Answer buffers, reused from task to task so their pages are faulted in once. held_
  // counts every one, lent or free (a lent one at least its task's charge), and stays
  // within budget_ except for one buffer alone.
  std::vector<std::vector<uint8_t>> free_;
  uint64_t held_ = 0;
  size_t leased_ = 0;
  bool closing_ = false;
  FirstError errors_;  // set under mu_, so that waiters on cv_ see it
  std::vector<std::tuple<Hash, uint32_t, uint32_t>> cache_keys_;
  WorkerGroup workers_;  // last: started after everything above exists
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
      Transfer transfer(d.cas, d.options, d.cache.get(), Transfer::Mode::kFile, part.get());
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
        BlockState* done = transfer.WaitAnyBlock();
        if (done == nullptr) break;
        // Each completed block is made durable for resume while the workers go on with the
        // next: the flush also keeps the data still to be flushed by Commit small (on this
        // project's VM a flush costs ~0.1 s per 256 MiB written since the last one). The
        // block that completes the file is made durable by Commit, with the rest.
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
  Transfer transfer(d.cas, d.options, d.cache.get(), Transfer::Mode::kStream, nullptr, verify);
  std::vector<ChunkInfo> chunks;  // verify: the file's chunks, in order
  std::deque<BlockState*> order;
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
    BlockState* b = order.front();
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
