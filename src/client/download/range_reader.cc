#include "client/download/range_reader.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "client/cache/chunk_cache.h"
#include "client/download/chunk_records.h"
#include "client/download/decoded_chunks.h"
#include "client/download/file_plan.h"
#include "client/download/plan_cache.h"
#include "common/mutex.h"
#include "common/worker_group.h"
#include "format/compression.h"
#include "format/keyed_hash.h"
#include "format/merkle.h"

namespace xet {
namespace {

constexpr uint64_t kInitialWindow = 8ull << 20;
constexpr uint64_t kMaxWindow = 128ull << 20;
constexpr uint64_t kMinWindow = 1ull << 20;
// Read-ahead fetches runs of at most this many compressed bytes (one GET each).
constexpr uint64_t kReadAheadRunBytes = 4ull << 20;
// A read starting this close to where the stream's reads end still counts as sequential:
// the kernel sends the reads of its read-ahead window concurrently (16 MiB in 1 MiB
// requests for the mount), and they arrive in any order. So the slack is this many reads of
// the read's own size, and at least kSequentialSlack: small random reads stay random.
constexpr uint64_t kSequentialSlack = 512ull << 10;
constexpr uint64_t kSequentialSlackReads = 32;
// Chunk cache entries are read in pieces of this size.
constexpr size_t kDiskReadBytes = 1u << 20;

class CasRangeSource final : public RangeSource {
 public:
  explicit CasRangeSource(CasClient& cas) : cas_(cas) {}
  Result<Reconstruction> Reconstruct(const Hash& file) override {
    return cas_.GetReconstruction(file, std::nullopt, /*chunk_detail=*/true);
  }
  Status StreamRange(const FetchEntry& entry, size_t range,
                     const std::function<Status(std::span<const uint8_t>)>& on_bytes) override {
    return cas_.StreamRange(entry, range, on_bytes);
  }

 private:
  CasClient& cas_;
};

}  // namespace

std::unique_ptr<RangeSource> MakeCasRangeSource(CasClient& cas) {
  return std::make_unique<CasRangeSource>(cas);
}

class RangeReader::Impl {
 public:
  using ChunkFn = std::function<void(uint32_t chunk, const ChunkPtr&)>;

  Impl(std::unique_ptr<RangeSource> source, RangeReaderOptions options, PlanCache::Clock clock)
      : source_(std::move(source)),
        options_(std::move(options)),
        plans_([this](const Hash& f) { return source_->Reconstruct(f); },
               options_.plan_cache_entries, options_.plan_ttl, std::move(clock)),
        // The arena covers the chunks held within memory_bytes plus the pool's free ones.
        buffers_(std::make_shared<ChunkBufferPool>(
            std::clamp<uint64_t>(options_.memory_bytes / 8, 1u << 20, 16u << 20),
            options_.memory_bytes +
                std::clamp<uint64_t>(options_.memory_bytes / 8, 1u << 20, 16u << 20))),
        memory_(options_.memory_bytes) {
    if (!options_.chunk_cache_dir.empty()) {
      auto opened = ChunkCache::Open(options_.chunk_cache_dir, options_.chunk_cache_bytes);
      if (opened.ok()) {
        disk_ = std::move(*opened);
      } else {
        disk_status_ = opened.status();
      }
    }
    workers_ = std::make_unique<WorkerGroup>(std::max<size_t>(1, options_.fetch_threads),
                                             [this] { WorkerLoop(); });
  }

  ~Impl() {
    {
      MutexLock lock(mu_);
      closing_ = true;
      queue_.clear();
    }
    cv_.NotifyAll();
    workers_.reset();
  }

  // Queues `task` for the fetch threads; `urgent` ones (plan prefetches) go first.
  void Submit(std::function<void()> task, bool urgent) {
    {
      MutexLock lock(mu_);
      if (closing_) return;
      if (urgent) {
        queue_.push_front(std::move(task));
      } else {
        queue_.push_back(std::move(task));
      }
    }
    cv_.NotifyOne();
  }

  // Most read-ahead one stream may have: half of the memory budget shared by the streams
  // reading sequentially.
  uint64_t WindowCap() const {
    const uint64_t streams = std::max<uint64_t>(1, sequential_streams_.load());
    return std::clamp<uint64_t>(options_.memory_bytes / 2 / streams, kMinWindow, kMaxWindow);
  }

  // Copies file bytes [offset, offset + out.size()) (inside the file) into `out`.
  Status ReadPlan(const FilePlan& plan, uint64_t offset, std::span<uint8_t> out, bool touch);

  // Queues read-ahead of file bytes [offset, offset + length).
  void ScheduleReadAhead(const std::shared_ptr<const FilePlan>& plan, uint64_t offset,
                         uint64_t length, const std::shared_ptr<std::atomic<bool>>& alive) {
    std::vector<FilePlan::Run> runs;
    plan->Runs(offset, length, kReadAheadRunBytes, &runs);
    for (const FilePlan::Run& run : runs) {
      Submit(
          [this, plan, run, alive] {
            if (alive->load()) ReadAhead(*plan, run);
          },
          false);
    }
  }

  std::unique_ptr<RangeSource> source_;
  const RangeReaderOptions options_;
  PlanCache plans_;
  // Before memory_: chunks hand their buffers back to it (each also holds a reference).
  std::shared_ptr<ChunkBufferPool> buffers_;
  DecodedChunks memory_;
  std::unique_ptr<ChunkCache> disk_;
  Status disk_status_;
  std::atomic<uint64_t> fetches_{0}, fetched_bytes_{0}, disk_chunks_{0};
  std::atomic<uint64_t> sequential_streams_{0};

 private:
  // What one fetch or cache read works with, kept between uses (LZ4 contexts are costly to
  // create; reused buffers are already faulted in).
  struct FetchScratch {
    ChunkCodec codec;
    ChunkRecordStream records;
    std::vector<uint8_t> disk_buffer;
  };
  // A FetchScratch from the pool, returned when done.
  class ScratchLease {
   public:
    explicit ScratchLease(Impl& impl) : impl_(impl) {
      MutexLock lock(impl_.scratch_mu_);
      if (!impl_.scratch_.empty()) {
        scratch_ = std::move(impl_.scratch_.back());
        impl_.scratch_.pop_back();
      }
      if (!scratch_) scratch_ = std::make_unique<FetchScratch>();
    }
    ~ScratchLease() {
      MutexLock lock(impl_.scratch_mu_);
      impl_.scratch_.push_back(std::move(scratch_));
    }
    ScratchLease(const ScratchLease&) = delete;
    ScratchLease& operator=(const ScratchLease&) = delete;
    FetchScratch* operator->() { return scratch_.get(); }

   private:
    Impl& impl_;
    std::unique_ptr<FetchScratch> scratch_;
  };

  void WorkerLoop() {
    for (;;) {
      std::function<void()> task;
      {
        MutexLock lock(mu_);
        while (!closing_ && queue_.empty()) cv_.Wait(mu_);
        if (closing_) return;
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      task();
    }
  }

  // Fetches the chunks of `run` that nobody holds or fetches; errors are left to the reads.
  void ReadAhead(const FilePlan& plan, const FilePlan::Run& run);

  // The decoded chunk `c` of term `t`: from `own` (chunks this read fetched), memory, a
  // fetch in flight, or fetched now (alone when exact, with its whole range otherwise; the
  // other chunks the fetch brings for the term go to `own`).
  // `pos` is the chunk's data position and `end` the end of the read's.
  Result<ChunkPtr> Resolve(const FilePlan& plan, const FilePlan::Term& t, uint32_t c, uint64_t pos,
                           uint64_t end, std::unordered_map<uint32_t, ChunkPtr>& own, bool touch);

  // Fetches the chunks of `run` (from the chunk cache when it has them), Puts each decoded
  // chunk through `claims` and hands it to `on_chunk`. `store`: what is fetched from the
  // network is also stored in the chunk cache (not for sequential streams: see
  // RangeReaderOptions::cache_sequential).
  Status FetchRun(const FilePlan& plan, const FilePlan::Run& run, ChunkClaims& claims,
                  const ChunkFn& on_chunk, bool store);
  // Publishes chunks [from, to) of chunk cache entry [start, end) of `xorb`; false when the
  // entry is missing or damaged (then it is erased).
  bool LoadFromDisk(const Hash& xorb, uint32_t start, uint32_t end, uint32_t from, uint32_t to,
                    ChunkClaims& claims, const ChunkFn& on_chunk);
  // Decodes a checked record into a new chunk.
  Result<ChunkPtr> Decode(ChunkCodec& codec, uint32_t index, const ChunkRecord& r,
                          std::span<const uint8_t> payload);

  Mutex scratch_mu_;
  std::vector<std::unique_ptr<FetchScratch>> scratch_ GUARDED_BY(scratch_mu_);

  Mutex mu_;
  CondVar cv_;  // a task was queued, or closing
  std::deque<std::function<void()>> queue_ GUARDED_BY(mu_);
  bool closing_ GUARDED_BY(mu_) = false;
  std::unique_ptr<WorkerGroup> workers_;  // started last, joined first
};

Result<ChunkPtr> RangeReader::Impl::Decode(ChunkCodec& codec, uint32_t index, const ChunkRecord& r,
                                           std::span<const uint8_t> payload) {
  std::shared_ptr<DecodedChunk> chunk = buffers_->NewChunk(r.usize);
  const std::span<uint8_t> dst(chunk->data, r.usize);
  XET_ASSIGN_OR_RETURN(std::span<const uint8_t> data,
                       DecodeChunkRecord(codec, index, r, payload, dst));
  if (data.data() != dst.data()) std::memcpy(dst.data(), data.data(), data.size());
  return ChunkPtr(std::move(chunk));
}

bool RangeReader::Impl::LoadFromDisk(const Hash& xorb, uint32_t start, uint32_t end, uint32_t from,
                                     uint32_t to, ChunkClaims& claims, const ChunkFn& on_chunk) {
  std::unique_ptr<ChunkCache::Reader> reader = disk_->OpenEntry(xorb, start, end);
  if (reader == nullptr) return false;
  const std::vector<ChunkInfo>& infos = reader->chunks();
  ScratchLease scratch(*this);
  ChunkRecordStream& stream = scratch->records;
  stream.Reset(end - start, reader->records_bytes());
  std::vector<uint8_t>& buffer = scratch->disk_buffer;
  buffer.resize(std::min<uint64_t>(kDiskReadBytes, reader->records_bytes()));
  bool enough = false;
  Status st = reader->ReadRecords(buffer, [&](std::span<const uint8_t> in) -> Status {
    return stream.Feed(
        in, [&](uint32_t i, const ChunkRecord& r, std::span<const uint8_t> payload) -> Status {
          const uint32_t k = start + i;
          if (k >= to) {
            enough = true;
            return Status::Cancelled("read enough of the entry");
          }
          if (k < from) return Status::Ok();
          XET_ASSIGN_OR_RETURN(ChunkPtr chunk, Decode(scratch->codec, i, r, payload));
          if (infos[i] != ChunkInfo{ChunkHash(chunk->span()), chunk->size}) {
            return Status::Corruption("chunk cache entry differs from its chunk hashes");
          }
          claims.Put(xorb, k, chunk);
          on_chunk(k, chunk);
          disk_chunks_.fetch_add(1, std::memory_order_relaxed);
          return Status::Ok();
        });
  });
  if (!enough && st.ok()) st = stream.Finish();
  if (!enough && !st.ok()) {
    reader.reset();
    disk_->Erase(xorb, start, end);
    return false;
  }
  return true;
}

Status RangeReader::Impl::FetchRun(const FilePlan& plan, const FilePlan::Run& run,
                                   ChunkClaims& claims, const ChunkFn& on_chunk, bool store) {
  const Hash& xorb = plan.xorb_hash(run.xorb);
  uint32_t c = run.first;
  if (disk_ != nullptr) {
    // Leading chunks from the cache, as long as entries cover them. A run that cannot be
    // narrowed takes an entry only when it holds all of it.
    while (c < run.end) {
      const auto cover = disk_->FindCovering(xorb, c);
      if (!cover) break;
      if (!run.exact && (cover->first > run.first || cover->second < run.end)) break;
      // Only the run's chunks: an entry may be far larger (a whole range a download stored).
      const uint32_t to = std::min(cover->second, run.end);
      if (!LoadFromDisk(xorb, cover->first, cover->second, c, to, claims, on_chunk)) break;
      c = to;
    }
  }
  if (c >= run.end) return Status::Ok();
  const FilePlan::Run net = run.exact ? plan.Narrow(run, c, run.end) : run;
  FetchEntry entry;
  entry.url = plan.entry(run).url;
  FetchRange fr;
  fr.chunk_start = net.first;
  fr.chunk_end = net.end;
  fr.byte_start = net.byte_first;
  fr.byte_end = net.byte_last;
  entry.ranges.push_back(fr);
  const uint64_t range_bytes = net.byte_last - net.byte_first + 1;

  std::unique_ptr<ChunkCache::Writer> cache_entry;
  std::vector<ChunkInfo> infos;
  if (disk_ != nullptr && (store || options_.cache_sequential)) {
    auto started = disk_->StartPut(xorb, net.first, net.end, range_bytes);
    if (started.ok()) cache_entry = std::move(*started);
  }
  ScratchLease scratch(*this);
  ChunkRecordStream& stream = scratch->records;
  stream.Reset(net.end - net.first, range_bytes);
  const ChunkRecordStream::RecordFn on_record = [&](uint32_t i, const ChunkRecord& r,
                                                    std::span<const uint8_t> payload) -> Status {
    XET_ASSIGN_OR_RETURN(ChunkPtr chunk, Decode(scratch->codec, i, r, payload));
    if (cache_entry) infos.push_back({ChunkHash(chunk->span()), chunk->size});
    claims.Put(xorb, net.first + i, chunk);
    on_chunk(net.first + i, chunk);
    return Status::Ok();
  };
  fetches_.fetch_add(1, std::memory_order_relaxed);
  XET_RETURN_IF_ERROR(source_->StreamRange(entry, 0, [&](std::span<const uint8_t> in) -> Status {
    fetched_bytes_.fetch_add(in.size(), std::memory_order_relaxed);
    if (cache_entry && !cache_entry->Append(in).ok()) cache_entry.reset();  // not cached
    return stream.Feed(in, on_record);
  }));
  XET_RETURN_IF_ERROR(stream.Finish());
  if (cache_entry) (void)cache_entry->Commit(infos);  // best effort: a cache failure is a miss
  return Status::Ok();
}

void RangeReader::Impl::ReadAhead(const FilePlan& plan, const FilePlan::Run& run) {
  const Hash& xorb = plan.xorb_hash(run.xorb);
  ChunkClaims claims(memory_);
  const ChunkFn ignore = [](uint32_t, const ChunkPtr&) {};
  if (!run.exact) {
    bool any = false;
    for (uint32_t c = run.first; c < run.end; ++c) any = claims.Claim(xorb, c) || any;
    if (any) (void)FetchRun(plan, run, claims, ignore, /*store=*/false);
    return;
  }
  for (uint32_t c = run.first; c < run.end; ++c) claims.Claim(xorb, c);
  for (uint32_t c = run.first; c < run.end;) {
    if (!claims.Holds(xorb, c)) {
      ++c;
      continue;
    }
    uint32_t e = c + 1;
    while (e < run.end && claims.Holds(xorb, e)) ++e;
    if (!FetchRun(plan, plan.Narrow(run, c, e), claims, ignore, /*store=*/false).ok()) return;
    c = e;
  }
}

Result<ChunkPtr> RangeReader::Impl::Resolve(const FilePlan& plan, const FilePlan::Term& t,
                                            uint32_t c, uint64_t pos, uint64_t end,
                                            std::unordered_map<uint32_t, ChunkPtr>& own,
                                            bool touch) {
  if (auto it = own.find(c); it != own.end()) return it->second;
  const Hash& xorb = plan.xorb_hash(t.xorb);
  const ChunkKey key{xorb, c};
  // A fetch by another reader may fail, or its chunk be dropped at once: try a few times.
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (ChunkPtr p = memory_.Get(key, touch)) return p;
    ChunkClaims claims(memory_);
    if (claims.Claim(xorb, c)) {
      const FilePlan::Run run =
          t.exact() ? plan.RunFor(t, c, c + 1) : plan.RunFor(t, t.chunk_start, t.chunk_end);
      // A whole range brings its other chunks too: claim them, so that other readers wait
      // for them rather than fetch the range again.
      for (uint32_t k = run.first; k < run.end; ++k) {
        if (k != c) claims.Claim(xorb, k);
      }
      ChunkPtr mine;
      uint64_t at = pos;  // data position of chunk k (chunks arrive in order)
      XET_RETURN_IF_ERROR(FetchRun(
          plan, run, claims,
          [&](uint32_t k, const ChunkPtr& p) {
            if (k < c) return;
            if (k == c) mine = p;
            // The term's later chunks this read still needs (all of a term may be far more).
            if (k > c && k < t.chunk_end && at < end) own[k] = p;
            at += p->size;
          },
          touch));
      if (mine == nullptr)
        return Status::Internal("fetch of chunk " + std::to_string(c) + " lost it");
      return mine;
    }
    if (ChunkPtr p = memory_.Wait(key)) return p;
  }
  return Status::Unavailable("chunk " + std::to_string(c) + " of xorb " + xorb.ToHex() +
                             " could not be fetched");
}

Status RangeReader::Impl::ReadPlan(const FilePlan& plan, uint64_t offset, std::span<uint8_t> out,
                                   bool touch) {
  std::vector<FilePlan::Piece> pieces;
  plan.Map(offset, out.size(), &pieces);
  const uint64_t d0 = offset + plan.skip();
  const uint64_t d1 = d0 + out.size();
  uint64_t copied = 0;
  std::unordered_map<uint32_t, ChunkPtr> own;
  for (const FilePlan::Piece& pc : pieces) {
    const FilePlan::Term& t = plan.terms()[pc.term];
    const Hash& xorb = plan.xorb_hash(t.xorb);
    own.clear();
    if (t.exact()) {
      // Claim what nobody holds or fetches and fetch it here, a run of chunks per GET.
      ChunkClaims claims(memory_);
      for (uint32_t c = pc.first; c < pc.end; ++c) {
        if (ChunkPtr p = memory_.Get({xorb, c}, touch)) {
          own[c] = std::move(p);
        } else {
          claims.Claim(xorb, c);
        }
      }
      const auto keep = [&](uint32_t k, const ChunkPtr& p) {
        if (k >= pc.first && k < pc.end) own[k] = p;
      };
      for (uint32_t c = pc.first; c < pc.end;) {
        if (!claims.Holds(xorb, c)) {
          ++c;
          continue;
        }
        uint32_t e = c + 1;
        while (e < pc.end && claims.Holds(xorb, e)) ++e;
        XET_RETURN_IF_ERROR(FetchRun(plan, plan.RunFor(t, c, e), claims, keep, touch));
        c = e;
      }
    }
    // Walk the piece's chunks, copying the part of each inside the read.
    uint64_t pos = pc.data;
    uint32_t c = pc.first;
    for (; c < pc.end && pos < d1; ++c) {
      XET_ASSIGN_OR_RETURN(ChunkPtr chunk, Resolve(plan, t, c, pos, d1, own, touch));
      if (t.exact() && chunk->size != plan.ChunkLength(t, c)) {
        return Status::Corruption("chunk " + std::to_string(c) + " of xorb " + xorb.ToHex() +
                                  " holds " + std::to_string(chunk->size) +
                                  " bytes, the plan says " +
                                  std::to_string(plan.ChunkLength(t, c)));
      }
      const uint64_t lo = std::max(pos, d0);
      const uint64_t hi = std::min({pos + chunk->size, d1, t.data_offset + t.length});
      if (lo < hi) {
        std::memcpy(out.data() + (lo - d0), chunk->data + (lo - pos), hi - lo);
        copied += hi - lo;
      }
      pos += chunk->size;
      if (!t.exact()) own.erase(c);
    }
    if (!t.exact() &&
        (pos > t.data_offset + t.length || (c == t.chunk_end && pos != t.data_offset + t.length))) {
      return Status::Corruption(
          "the chunks of a term of xorb " + xorb.ToHex() + " hold " +
          (c == t.chunk_end ? std::to_string(pos - t.data_offset) : "more than its") +
          " bytes, the answer says " + std::to_string(t.length));
    }
  }
  if (copied != out.size()) {
    return Status::Internal("read of " + std::to_string(out.size()) + " bytes found " +
                            std::to_string(copied));
  }
  return Status::Ok();
}

// One open file: the access pattern and read-ahead state of its reads.
class RangeReader::StreamImpl final : public RangeReader::Stream {
 public:
  StreamImpl(Impl& impl, const Hash& file, uint64_t size, bool read_ahead)
      : impl_(impl), file_(file), size_(size), read_ahead_(read_ahead) {}
  ~StreamImpl() override {
    alive_->store(false);
    MutexLock lock(mu_);
    if (window_ != 0) impl_.sequential_streams_.fetch_sub(1);
  }

  Result<size_t> Read(uint64_t offset, std::span<uint8_t> out) override {
    if (offset >= size_ || out.empty()) return size_t{0};
    XET_RETURN_IF_ERROR(impl_.disk_status_);
    const size_t n = static_cast<size_t>(std::min<uint64_t>(out.size(), size_ - offset));
    std::optional<bool> sequential;
    for (int attempt = 0;; ++attempt) {
      XET_ASSIGN_OR_RETURN(std::shared_ptr<const FilePlan> plan, impl_.plans_.Get(file_, size_));
      if (!sequential) sequential = read_ahead_ && NoteRead(plan, offset, n);
      Status st = impl_.ReadPlan(*plan, offset, out.first(n), !*sequential);
      if (st.ok()) return n;
      // An expired or revoked URL: a fresh plan, once.
      if (st.code() != Status::Code::kPermissionDenied || attempt > 0) return st;
      impl_.plans_.Refused(file_, plan);
    }
  }

 private:
  // Records a read of [offset, offset + n) and queues read-ahead when the stream reads
  // sequentially; returns whether it does.
  bool NoteRead(const std::shared_ptr<const FilePlan>& plan, uint64_t offset, uint64_t n) {
    uint64_t from = 0, to = 0;
    {
      MutexLock lock(mu_);
      const uint64_t end = offset + n;
      const uint64_t slack = std::max(kSequentialSlack, n * kSequentialSlackReads);
      const bool near = offset + slack >= next_ && offset <= next_ + slack;
      if (!near) {
        hits_ = 0;
        if (window_ != 0) impl_.sequential_streams_.fetch_sub(1);
        window_ = 0;
        ahead_ = 0;
        next_ = end;
        return false;
      }
      ++hits_;
      next_ = std::max(next_, end);
      if (hits_ < 2) return false;
      if (window_ == 0) {
        window_ = kInitialWindow;
        impl_.sequential_streams_.fetch_add(1);
      }
      const uint64_t cap = impl_.WindowCap();
      window_ = std::min(window_, cap);
      ahead_ = std::max(ahead_, next_);
      // Top the window up once half of it has been read.
      if (ahead_ < size_ && ahead_ - next_ <= window_ / 2) {
        from = ahead_;
        to = std::min(size_, next_ + window_);
        ahead_ = to;
        window_ = std::min(window_ * 2, cap);
      }
    }
    if (to > from) impl_.ScheduleReadAhead(plan, from, to - from, alive_);
    return true;
  }

  Impl& impl_;
  const Hash file_;
  const uint64_t size_;
  const bool read_ahead_;
  const std::shared_ptr<std::atomic<bool>> alive_ = std::make_shared<std::atomic<bool>>(true);
  Mutex mu_;
  uint64_t next_ GUARDED_BY(mu_) = 0;    // where the reads so far end
  uint64_t ahead_ GUARDED_BY(mu_) = 0;   // read-ahead queued up to here
  uint64_t window_ GUARDED_BY(mu_) = 0;  // 0: not reading sequentially
  uint32_t hits_ GUARDED_BY(mu_) = 0;    // sequential reads in a row
};

RangeReader::RangeReader(CasClient& cas, RangeReaderOptions options)
    : RangeReader(MakeCasRangeSource(cas), std::move(options)) {}

RangeReader::RangeReader(std::unique_ptr<RangeSource> source, RangeReaderOptions options,
                         std::function<std::chrono::steady_clock::time_point()> clock)
    : impl_(std::make_unique<Impl>(std::move(source), std::move(options), std::move(clock))) {}

RangeReader::~RangeReader() = default;

Status RangeReader::status() const { return impl_->disk_status_; }

void RangeReader::PrefetchPlan(const Hash& file, uint64_t size) {
  if (size == 0 || impl_->plans_.Has(file)) return;
  Impl* impl = impl_.get();
  impl_->Submit(
      [impl, file, size] {
        if (!impl->plans_.Has(file)) (void)impl->plans_.Get(file, size);
      },
      true);
}

std::unique_ptr<RangeReader::Stream> RangeReader::Open(const Hash& file, uint64_t size,
                                                       bool read_ahead) {
  return std::make_unique<StreamImpl>(*impl_, file, size, read_ahead);
}

void RangeReader::Forget(const Hash& file) { impl_->plans_.Forget(file); }

uint64_t RangeReader::reconstruction_requests() const { return impl_->plans_.requests(); }

RangeReader::Stats RangeReader::stats() const {
  Stats s;
  s.reconstruction_requests = impl_->plans_.requests();
  s.fetches = impl_->fetches_.load();
  s.fetched_bytes = impl_->fetched_bytes_.load();
  s.disk_chunks = impl_->disk_chunks_.load();
  return s;
}

}  // namespace xet
