// The upload pipeline (see uploader.h for the stages). Threads of one Upload() call:
//   - hash workers (UploadOptions::hash_threads): each takes the next item and streams it
//     in blocks of kUploadReadBlock; after a block that was mostly predicted (below),
//     the next one is read ahead on the worker's BlockReader thread (a fresh file's
//     blocks are not: both cores chunk then). Chunk boundaries: chunks the dedup index predicts
//     (the chunk that followed the last one in an earlier upload; an unchanged run) are
//     checked by hash and cut instead of scanned; the rest is chunked and hashed across
//     the worker and its BlockChunker helpers, one per core the workers leave idle, so one
//     large file uses every core. With compute_sha256, the SHA-256 of blocks >= 1 MiB runs
//     on the worker's Sha256Worker thread, in parallel. The worker decides dedup chunk by
//     chunk (DedupIndex, with the FragmentationFilter's bounded look-ahead) and packs new
//     chunks into its own XorbBuilder (compression happens there, on the worker's core).
//     A full builder is sealed: its hash and CAS info are recorded and it goes to the
//     upload queue.
//   - xorb uploaders (upload_concurrency threads, admitted by an AdaptiveLimit).
//   - global-dedup queriers (kGlobalDedupThreads), fed without blocking by the workers.
// Memory: sealed xorbs waiting or in flight are bounded by kMaxXorbBytesInFlight (a
// worker blocks before queueing more: backpressure); each worker holds two read buffers
// (kUploadReadBlock + one chunk each; the second only once a block is read ahead), one
// xorb being packed (<= 64 MiB) and at most one undecided dedup run (~1 MiB). With 2
// workers: ~2 × 81 MiB + 192 MiB + the chunk index.
// Uploaded xorbs' buffers go back to a pool (kMaxXorbBytesInFlight / 64 MiB + 1 of them)
// that the workers' builders take from, so a long upload faults in a handful of 64 MiB
// buffers instead of one per xorb.
#include "client/upload/uploader.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <thread>
#include <unordered_set>

#include "client/cache/dedup_index.h"
#include "client/cache/local_shard_cache.h"
#include "client/upload/adaptive_limit.h"
#include "client/upload/block_chunker.h"
#include "client/upload/block_cutter.h"
#include "client/upload/block_reader.h"
#include "client/upload/fragmentation.h"
#include "client/upload/sha256_worker.h"
#include "client/upload/shard_builder.h"
#include "common/bounded_queue.h"
#include "common/buffer_pool.h"
#include "common/first_error.h"
#include "common/mutex.h"
#include "common/worker_group.h"
#include "format/chunker.h"
#include "format/keyed_hash.h"
#include "format/merkle.h"
#include "format/shard_parser.h"
#include "format/shard_writer.h"
#include "format/xorb.h"

namespace xet {
namespace {

inline constexpr size_t kUploadReadBlock = 8 << 20;
inline constexpr uint64_t kMaxXorbBytesInFlight = 192ull << 20;
inline constexpr size_t kSha256OffloadBytes = 1 << 20;
// A xorb being packed is sealed (and so sent) once this many bytes of input went by
// without adding to it: an update's few new chunks go out while the rest of the file is
// still read, instead of after it (the last xorb's upload is otherwise the update's tail).
// A fresh upload adds to its xorb all the time and never reaches it.
inline constexpr uint64_t kIdleSealBytes = 64ull << 20;
inline constexpr size_t kGlobalDedupThreads = 2;
inline constexpr size_t kGlobalDedupQueue = 256;

uint64_t NowSeconds() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

// Bytes of sealed xorbs not yet landed, bounded.
class ByteBudget {
 public:
  explicit ByteBudget(uint64_t max) : max_(max) {}
  bool Acquire(uint64_t n) {
    MutexLock lock(mu_);
    while (!cancelled_ && used_ != 0 && used_ + n > max_) cv_.Wait(mu_);
    if (cancelled_) return false;
    used_ += n;
    return true;
  }
  void Release(uint64_t n) {
    MutexLock lock(mu_);
    used_ -= std::min(used_, n);
    cv_.NotifyAll();
  }
  void Cancel() {
    MutexLock lock(mu_);
    cancelled_ = true;
    cv_.NotifyAll();
  }

 private:
  const uint64_t max_;
  Mutex mu_;
  CondVar cv_;
  uint64_t used_ GUARDED_BY(mu_) = 0;
  bool cancelled_ GUARDED_BY(mu_) = false;
};

struct SealedXorb {
  Hash hash;
  std::vector<uint8_t> bytes;
};

class Session;

// Background global-dedup queries: a bounded queue that never blocks the producer (a
// query that does not fit is dropped: dedup is an optimization), each hash asked once.
class GlobalDedup {
 public:
  GlobalDedup(Session& session, bool enabled);
  ~GlobalDedup() { Stop(); }
  // Asks in the background.
  void Enqueue(const Hash& chunk);
  // Asks now (the first chunk of a file: its answer usually covers the whole file).
  void QueryNow(const Hash& chunk);
  void Stop();

 private:
  bool Claim(const Hash& chunk);
  void Run();

  Session& session_;
  Mutex mu_;
  CondVar cv_;
  std::deque<Hash> queue_ GUARDED_BY(mu_);
  std::unordered_set<Hash, HashHasher> asked_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;  // started by the constructor, joined by Stop()
};

class Session {
 public:
  Session(CasClient& cas, const UploadOptions& options, std::span<const UploadItem> items,
          const ComposeFiles& compose)
      : cas_(cas),
        options_(options),
        items_(items),
        compose_(compose),
        budget_(kMaxXorbBytesInFlight),
        limit_(std::max<size_t>(1, options.upload_concurrency),
               std::min<size_t>(2, std::max<size_t>(1, options.upload_concurrency))),
        upload_queue_(1),
        files_(items.size()),
        results_(items.size()) {}

  Result<std::vector<UploadedFile>> Run();

  // For GlobalDedup.
  void OnDedupAnswer(std::span<const uint8_t> shard_bytes) {
    auto shard = ParseShard(shard_bytes);
    if (!shard.ok()) return;
    index_.AddShard(*shard, NowSeconds());
    if (cache_) (void)cache_->Add("dedup-" + ChunkHash(shard_bytes).ToHex(), shard_bytes);
  }
  CasClient& cas() { return cas_; }

 private:
  struct Worker;
  void WorkerLoop();
  struct FileProgress;
  Status ProcessFile(size_t i, Worker& w);
  Status ReadAndCut(Worker& w, ByteSource& source, const std::string& name, FileProgress& f);
  Status EmitChunk(Worker& w, FileProgress& f, std::span<const uint8_t> data, const Hash& hash);
  Status ApplyVerdicts(Worker& w, std::span<const uint8_t> current);
  Status PackChunk(Worker& w, const Hash& hash, uint64_t size, std::span<const uint8_t> data);
  void UploadLoop();
  Status Seal(Worker& w);
  bool Confirmed(uint32_t xorb);
  std::optional<ChunkLocation> FindUsable(const Hash& chunk, uint64_t now);
  Status BuildAndUploadShards();
  TransferStats* stats() { return options_.stats; }

  CasClient& cas_;
  const UploadOptions& options_;
  std::span<const UploadItem> items_;
  const ComposeFiles& compose_;
  DedupIndex index_;
  std::optional<LocalShardCache> cache_;
  FirstError error_;  // the session's first failure; every thread stops on it
  ByteBudget budget_;
  AdaptiveLimit limit_;
  BoundedQueue<SealedXorb> upload_queue_;
  // Bytes of uploaded xorbs, reused by the workers' builders.
  BufferPool xorb_buffers_{kMaxXorbBytesInFlight / kXorbMaxSize + 1};
  std::atomic<size_t> next_item_{0};
  size_t chunk_helpers_ = 0;  // BlockChunker helper threads per worker
  std::unique_ptr<GlobalDedup> global_;

  Mutex xorbs_mu_;
  std::vector<CasInfo> new_xorbs_ GUARDED_BY(xorbs_mu_);
  std::vector<PendingFileInfo> files_;
  std::vector<UploadedFile> results_;
};

GlobalDedup::GlobalDedup(Session& session, bool enabled) : session_(session) {
  if (!enabled) return;
  for (size_t i = 0; i < kGlobalDedupThreads; ++i) threads_.emplace_back([this] { Run(); });
}

bool GlobalDedup::Claim(const Hash& chunk) {
  MutexLock lock(mu_);
  return !stop_ && asked_.insert(chunk).second;
}

void GlobalDedup::Enqueue(const Hash& chunk) {
  if (threads_.empty()) return;
  MutexLock lock(mu_);
  if (stop_ || queue_.size() >= kGlobalDedupQueue || !asked_.insert(chunk).second) return;
  queue_.push_back(chunk);
  cv_.NotifyOne();
}

void GlobalDedup::QueryNow(const Hash& chunk) {
  if (threads_.empty() || !Claim(chunk)) return;
  auto answer = session_.cas().QueryChunk(chunk);
  if (answer.ok() && answer->has_value()) session_.OnDedupAnswer(**answer);
}

void GlobalDedup::Run() {
  while (true) {
    Hash chunk;
    {
      MutexLock lock(mu_);
      while (!stop_ && queue_.empty()) cv_.Wait(mu_);
      if (stop_) return;
      chunk = queue_.front();
      queue_.pop_front();
    }
    auto answer = session_.cas().QueryChunk(chunk);
    if (answer.ok() && answer->has_value()) session_.OnDedupAnswer(**answer);
  }
}

void GlobalDedup::Stop() {
  {
    MutexLock lock(mu_);
    stop_ = true;
    cv_.NotifyAll();
  }
  for (auto& t : threads_) t.join();
  threads_.clear();
}

// Per-worker state, reused across the files the worker processes.
struct Session::Worker {
  Worker(size_t chunk_helpers, TransferStats* stats)
      : chunker(chunk_helpers), cutter(chunker, stats) {}

  XorbBuilder builder;
  uint32_t builder_xorb = 0;  // session id of the xorb being packed (when not empty)
  BlockReader reader{kUploadReadBlock, kMaxChunkSize};
  Sha256Worker sha;      // after `reader`: destroyed (joined) while the blocks it reads live
  BlockChunker chunker;  // likewise
  BlockCutter cutter;    // uses `chunker`
  FragmentationFilter filter;
  std::vector<FragmentationFilter::Verdict> verdicts;
  struct Pending {
    Hash hash;
    uint64_t size = 0;
    std::optional<ChunkLocation> loc;
    std::vector<uint8_t> data;  // kept only while undecided
  };
  std::deque<Pending> pending;
  FileInfoBuilder file;
  uint64_t idle_bytes = 0;  // input referenced (not packed) since the builder last grew
};

// What ProcessFile learns of the file it reads.
struct Session::FileProgress {
  std::vector<ChunkInfo> chunks;  // every chunk, in order (the file hash)
  uint64_t size = 0;
  uint64_t now = 0;  // unix seconds at the file's start, for dedup index lookups
  // A fragment (UploadItem::fragment) starts where a file was changed: its first chunk is
  // new, so asking the server about it at once would only cost a round trip.
  bool fragment = false;
};

// Whether a shard of this session may reference `xorb`: asks the server once for a xorb
// known only from the local shard cache (see XorbTrust). A failed question counts as a no:
// the chunks are sent again, which is always correct.
bool Session::Confirmed(uint32_t xorb) {
  switch (index_.Trust(xorb)) {
    case XorbTrust::kConfirmed:
      return true;
    case XorbTrust::kMissing:
      return false;
    case XorbTrust::kUnconfirmed:
      break;
  }
  auto exists = cas_.XorbExists(index_.XorbHash(xorb));
  const bool ok = exists.ok() && *exists;
  index_.SetTrust(xorb, ok ? XorbTrust::kConfirmed : XorbTrust::kMissing);
  return ok;
}

// A location of `chunk` in a xorb a shard may reference (each refusal marks its xorb
// missing, so the next lookup finds another location or none).
std::optional<ChunkLocation> Session::FindUsable(const Hash& chunk, uint64_t now) {
  auto loc = index_.Find(chunk, now);
  while (loc && !Confirmed(loc->xorb)) loc = index_.Find(chunk, now);
  return loc;
}

Status Session::Seal(Worker& w) {
  if (w.builder.empty()) return Status::Ok();
  SerializedXorb x = w.builder.Finish();
  index_.SetXorbHash(w.builder_xorb, x.hash);
  {
    MutexLock lock(xorbs_mu_);
    new_xorbs_.push_back(CasInfoForXorb(x.hash, x.table, x.bytes.size()));
  }
  const uint64_t n = x.bytes.size();
  if (!budget_.Acquire(n) || !upload_queue_.Push(SealedXorb{x.hash, std::move(x.bytes)})) {
    return Status::Cancelled("upload cancelled");
  }
  return Status::Ok();
}

// Adds a new chunk to the worker's xorb (sealing a full one first) and to the index.
Status Session::PackChunk(Worker& w, const Hash& hash, uint64_t size,
                          std::span<const uint8_t> data) {
  if (!w.builder.CanAdd(data.size())) XET_RETURN_IF_ERROR(Seal(w));
  if (w.builder.empty()) {
    w.builder_xorb = index_.NewSessionXorb();
    w.builder.UseBuffer(xorb_buffers_.Take(kXorbMaxSize));
  }
  XET_RETURN_IF_ERROR(w.builder.Add(data, hash));
  const ChunkLocation loc{w.builder_xorb, static_cast<uint32_t>(w.builder.num_chunks() - 1)};
  index_.Insert(hash, loc, size);
  w.file.AddChunk(loc.xorb, loc.index, hash, size);
  w.idle_bytes = 0;
  return Status::Ok();
}

// Applies the filter's verdicts to the oldest pending chunks; `current` is the data of
// the newest pending chunk while it is still in the read buffer.
Status Session::ApplyVerdicts(Worker& w, std::span<const uint8_t> current) {
  for (const auto& v : w.verdicts) {
    for (size_t k = 0; k < v.count; ++k) {
      Worker::Pending& p = w.pending.front();
      if (v.reference) {
        w.file.AddChunk(p.loc->xorb, p.loc->index, p.hash, p.size);
        if (stats()) stats()->bytes_deduped += p.size;
        w.idle_bytes += p.size;
      } else {
        std::span<const uint8_t> data =
            (w.pending.size() == 1 && p.data.empty()) ? current : std::span<const uint8_t>(p.data);
        XET_RETURN_IF_ERROR(PackChunk(w, p.hash, p.size, data));
      }
      w.pending.pop_front();
    }
  }
  w.verdicts.clear();
  if (w.idle_bytes >= kIdleSealBytes && !w.builder.empty()) XET_RETURN_IF_ERROR(Seal(w));
  // The newest chunk stays undecided: keep a copy of its bytes.
  if (!w.pending.empty() && w.pending.back().data.empty() && !current.empty()) {
    w.pending.back().data.assign(current.begin(), current.end());
  }
  return Status::Ok();
}

// The next chunk of the file: where it already is (session, local shard cache, global
// dedup), then the fragmentation filter's say on the chunks so far.
Status Session::EmitChunk(Worker& w, FileProgress& f, std::span<const uint8_t> data,
                          const Hash& hash) {
  const bool first = f.chunks.empty();
  f.chunks.push_back({hash, data.size()});
  auto loc = FindUsable(hash, f.now);
  if (!loc && options_.global_dedup) {
    if (first && !f.fragment) {
      global_->QueryNow(hash);
      loc = FindUsable(hash, NowSeconds());
    } else if (IsGlobalDedupEligible(hash)) {
      global_->Enqueue(hash);
    }
  }
  w.pending.push_back({hash, data.size(), loc, {}});
  w.filter.Push(loc.has_value(), data.size(), &w.verdicts);
  return ApplyVerdicts(w, data);
}

// Reads `source` block by block, digests it (compute_sha256) and cuts it into chunks
// (BlockCutter), each emitted in order.
Status Session::ReadAndCut(Worker& w, ByteSource& source, const std::string& name,
                           FileProgress& f) {
  // The chunk the dedup index expects next (the one that followed the last emitted chunk
  // in an earlier upload): an unchanged run is then checked chunk by chunk (hash and cut)
  // instead of scanned for boundaries.
  const BlockCutter::PredictFn predict = [this](const Hash& hash) {
    return index_.FollowingChunk(hash);
  };
  const BlockCutter::EmitFn emit = [&](std::span<const uint8_t> data, const Hash& hash) {
    return EmitChunk(w, f, data, hash);
  };
  w.cutter.Reset();
  w.reader.Start(&source);
  // Waits for a read ahead still in flight when this returns early, before `source` goes.
  struct StopReading {
    BlockReader& reader;
    ~StopReading() { reader.Stop(); }
  } stop_reading{w.reader};
  std::span<const uint8_t> carry;  // the open chunk's bytes, in the last view
  bool end = false;
  // Read ahead only while blocks are mostly predicted: predicting leaves the helpers idle,
  // while chunking keeps every core busy and a reading thread would only compete with it
  // (it made fresh uploads slower; docs/bench-log/client.md).
  bool read_ahead = false;
  while (!end) {
    if (error_.failed()) return Status::Cancelled("upload cancelled");
    // A full block (unless the file ends in it), so that it splits across the helpers.
    auto view = w.reader.Next(carry, read_ahead);
    if (!view.ok()) return view.status().WithContext(name);
    end = view->end;
    const std::span<const uint8_t> fresh = view->fresh;
    if (options_.compute_sha256 && !fresh.empty()) {
      // A large block is digested on the SHA-256 thread while this one chunks it.
      if (fresh.size() >= kSha256OffloadBytes) {
        w.sha.Update(fresh);
      } else {
        w.sha.UpdateHere(fresh);
      }
    }
    f.size += fresh.size();
    if (stats()) stats()->bytes_done += fresh.size();
    // A chunk that runs past the bytes read so far ends the cut: the unconsumed bytes are
    // carried into the next view.
    XET_ASSIGN_OR_RETURN(const BlockCutter::Cut cut,
                         w.cutter.CutBlock(view->all, end, predict, emit));
    w.sha.Wait();  // the next view reuses this block's buffer
    carry = view->all.subspan(cut.consumed);
    read_ahead = cut.predicted_bytes * 2 >= view->all.size();
  }
  return Status::Ok();
}

Status Session::ProcessFile(size_t item_index, Worker& w) {
  const UploadItem& item = items_[item_index];
  auto opened = item.open();
  if (!opened.ok()) return opened.status().WithContext(item.name);
  ByteSource& source = **opened;

  w.sha.Reset();  // a file that failed halfway may have left a partial stream
  FileProgress f;
  f.now = NowSeconds();
  f.fragment = item.fragment;
  XET_RETURN_IF_ERROR(ReadAndCut(w, source, item.name, f));
  w.filter.Finish(&w.verdicts);
  XET_RETURN_IF_ERROR(ApplyVerdicts(w, {}));

  const Hash file_hash = FileHash(f.chunks);
  std::optional<Sha256Digest> digest;
  if (options_.compute_sha256) digest = w.sha.Finish();
  files_[item_index] = w.file.Finish(file_hash, digest);
  results_[item_index] = UploadedFile{file_hash, f.size, digest.value_or(Sha256Digest{})};
  if (item.fragment) results_[item_index].chunks = std::move(f.chunks);
  if (stats()) stats()->files_done += 1;
  return Status::Ok();
}

void Session::WorkerLoop() {
  Worker w(chunk_helpers_, stats());
  while (!error_.failed()) {
    const size_t i = next_item_.fetch_add(1);
    if (i >= items_.size()) break;
    if (Status s = ProcessFile(i, w); !s.ok()) {
      error_.Set(std::move(s));
      break;
    }
  }
  if (!error_.failed()) {
    if (Status s = Seal(w); !s.ok()) error_.Set(std::move(s));
  }
}

void Session::UploadLoop() {
  while (auto x = upload_queue_.Pop()) {
    const uint64_t n = x->bytes.size();
    if (!error_.failed() && limit_.Acquire()) {
      const auto t0 = std::chrono::steady_clock::now();
      auto r = cas_.UploadXorb(x->hash, x->bytes);
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      limit_.Release(r.ok(), secs, static_cast<double>(n) / (1 << 20));
      if (!r.ok()) {
        error_.Set(r.status().WithContext("uploading xorb " + x->hash.ToHex()));
      } else if (stats()) {
        stats()->bytes_sent += n;
      }
    }
    xorb_buffers_.Give(std::move(x->bytes));
    budget_.Release(n);
    if (error_.failed()) {
      budget_.Cancel();
      limit_.Cancel();
      upload_queue_.Close();
    }
  }
}

Status Session::BuildAndUploadShards() {
  std::vector<FileInfo> files;
  files.reserve(files_.size());
  auto xorb_hash = [&](uint32_t id) { return index_.XorbHash(id); };
  for (size_t i = 0; i < files_.size(); ++i) {
    FileInfo info = ResolveFileInfo(files_[i], xorb_hash);
    if (items_[i].fragment) {
      results_[i].terms = std::move(info.terms);
      results_[i].verification = std::move(info.verification);
    } else {
      files.push_back(std::move(info));
    }
  }
  if (compose_) {
    XET_ASSIGN_OR_RETURN(std::vector<FileInfo> composed, compose_(results_));
    for (FileInfo& f : composed) files.push_back(std::move(f));
  }
  // A xorb sealed twice (same content packed by two workers) is described once.
  std::vector<CasInfo> xorbs;
  std::unordered_set<Hash, HashHasher> seen;
  std::vector<CasInfo> sealed;
  {
    MutexLock lock(xorbs_mu_);  // uncontended: the workers have stopped
    sealed = std::move(new_xorbs_);
  }
  for (CasInfo& c : sealed) {
    if (seen.insert(c.cas_hash).second) xorbs.push_back(std::move(c));
  }
  XET_ASSIGN_OR_RETURN(auto shards, SplitIntoShards(std::move(files), std::move(xorbs)));
  for (const Shard& shard : shards) {
    XET_ASSIGN_OR_RETURN(auto bytes, SerializeShardForUpload(shard));
    auto r = cas_.UploadShard(bytes);
    if (!r.ok()) return r.status().WithContext("uploading shard");
    if (stats()) stats()->bytes_sent += bytes.size();
    if (cache_) (void)cache_->Add("upload-" + ChunkHash(bytes).ToHex(), bytes);
  }
  return Status::Ok();
}

Result<std::vector<UploadedFile>> Session::Run() {
  if (stats()) {
    stats()->files_total += items_.size();
    for (const auto& item : items_) stats()->bytes_total += item.size_hint;
  }
  if (!options_.shard_cache_dir.empty()) {
    cache_.emplace(options_.shard_cache_dir);
    // A cache that cannot be read only costs dedup.
    (void)cache_->Load(index_, NowSeconds());
  }
  global_ = std::make_unique<GlobalDedup>(*this, options_.global_dedup);

  size_t hash_threads = options_.hash_threads;
  if (hash_threads == 0) hash_threads = std::max(1u, std::thread::hardware_concurrency());
  hash_threads = std::max<size_t>(1, std::min(hash_threads, items_.size()));
  // Cores the workers leave idle chunk inside large files (one worker for one big file).
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  chunk_helpers_ = (cores + hash_threads - 1) / hash_threads - 1;
  const size_t upload_threads = std::max<size_t>(1, options_.upload_concurrency);

  WorkerGroup uploaders(upload_threads, [this] { UploadLoop(); });
  WorkerGroup workers(hash_threads, [this] { WorkerLoop(); });
  workers.Join();
  upload_queue_.Close();
  uploaders.Join();
  global_->Stop();

  if (error_.failed()) return error_.status();
  XET_RETURN_IF_ERROR(BuildAndUploadShards());
  return std::move(results_);
}

}  // namespace

struct Uploader::Impl {
  CasClient& cas;
  UploadOptions options;
};

Uploader::Uploader(CasClient& cas, UploadOptions options)
    : impl_(std::make_unique<Impl>(Impl{cas, std::move(options)})) {}

Uploader::~Uploader() = default;

Result<std::vector<UploadedFile>> Uploader::Upload(std::span<const UploadItem> items,
                                                   const ComposeFiles& compose) {
  Session session(impl_->cas, impl_->options, items, compose);
  return session.Run();
}

}  // namespace xet
