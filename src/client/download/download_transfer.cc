#include "client/download/download_transfer.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "client/cache/chunk_cache.h"
#include "client/download/chunk_records.h"
#include "client/download/part_file.h"
#include "client/download/range_decoder.h"
#include "client/download/staged_writer.h"
#include "common/huge_pages.h"

namespace xet {
namespace {

// Largest FetchRanges call built from several ranges (a single larger range is one call).
constexpr uint64_t kMaxTaskBytes = 32ull << 20;
// Per worker: chunk cache entries are read in pieces of this size.
constexpr size_t kCacheReadBytes = 1u << 20;

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

}  // namespace

// kFile: term bytes go to their file offsets through the worker's staging writer.
class DownloadTransfer::FileSink final : public TermSink {
 public:
  FileSink(StagedWriter& writer, uint64_t block_first) : writer_(writer), first_(block_first) {}
  void Prepare(uint32_t, const TermPlacement&) override {}
  Status Put(uint32_t, const TermPlacement& p, uint64_t at,
             std::span<const uint8_t> bytes) override {
    return writer_.Write(first_ + p.out_offset + at, bytes);
  }

 private:
  StagedWriter& writer_;
  const uint64_t first_;
};

// kStream: term bytes go to the term's buffer (from the transfer's pool), for the sink.
class DownloadTransfer::StreamSink final : public TermSink {
 public:
  StreamSink(DownloadBlock& block, BasicBufferPool<UninitializedBytes>& pool)
      : block_(block), pool_(pool) {}
  void Prepare(uint32_t term, const TermPlacement& p) override {
    UninitializedBytes& bytes = block_.term_bytes[term];
    if (bytes.capacity() < p.take) bytes = pool_.Take(p.take);
    bytes.resize(p.take);
  }
  Status Put(uint32_t term, const TermPlacement&, uint64_t at,
             std::span<const uint8_t> bytes) override {
    std::copy(bytes.begin(), bytes.end(),
              block_.term_bytes[term].begin() + static_cast<ptrdiff_t>(at));
    return Status::Ok();
  }

 private:
  DownloadBlock& block_;
  BasicBufferPool<UninitializedBytes>& pool_;
};

// What one worker thread reuses from range to range.
struct DownloadTransfer::WorkerScratch {
  RangeDecoder decoder;
  StagedWriter writer;
  std::vector<ChunkRecord> records;
  ChunkRecordStream stream;  // DecodeStreamed: a record split across pieces
  // Chunk cache reads only: sized (kCacheReadBytes) at the first one. Zero-filling it up
  // front cost every download its pages (a fresh page is a host fault in this guest).
  std::vector<uint8_t> read_buffer;
  // The sink of the range being decoded (BeginRange sets the one of the transfer's mode).
  std::optional<FileSink> file_sink;
  std::optional<StreamSink> stream_sink;
};

DownloadTransfer::DownloadTransfer(CasClient& cas, const DownloadOptions& options,
                                   ChunkCache* cache, Mode mode, PartFile* part, bool hash_chunks)
    : cas_(cas),
      options_(options),
      cache_(cache),
      mode_(mode),
      hash_chunks_(mode == Mode::kFile || hash_chunks),
      part_(part),
      max_task_bytes_(std::clamp<uint64_t>(std::max<uint64_t>(1, options.max_bytes_in_flight) /
                                               (2 * std::max<size_t>(1, options.fetch_concurrency)),
                                           1, kMaxTaskBytes)),
      answers_(options.max_bytes_in_flight),
      workers_(std::max<size_t>(1, options.fetch_concurrency), [this] { WorkerLoop(); }) {}

DownloadTransfer::~DownloadTransfer() {
  {
    MutexLock lock(mu_);
    closing_ = true;
  }
  cv_.NotifyAll();
  workers_.Join();
}

Result<DownloadBlock*> DownloadTransfer::StartBlock(const Hash& file_hash, uint64_t index,
                                                    const ByteSpan& span) {
  auto state = std::make_unique<DownloadBlock>();
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
  DownloadBlock* raw = state.get();
  {
    MutexLock lock(mu_);
    raw->tasks_left = raw->plan.tasks.size();
    for (size_t t = 0; t < raw->plan.tasks.size(); ++t) queue_.push_back({raw, t});
    blocks_.push_back(std::move(state));
  }
  cv_.NotifyAll();
  return raw;
}

void DownloadTransfer::Fail(Status st) {
  {
    MutexLock lock(mu_);  // a waiter checks errors_ under mu_: no lost wake-up
    errors_.Set(std::move(st));
  }
  cv_.NotifyAll();
}

bool DownloadTransfer::WaitBlock(DownloadBlock* block) {
  MutexLock lock(mu_);
  while (block->tasks_left != 0 && !errors_.failed()) cv_.Wait(mu_);
  return !errors_.failed();
}

DownloadBlock* DownloadTransfer::WaitAnyBlock() {
  MutexLock lock(mu_);
  for (;;) {
    if (errors_.failed()) return nullptr;
    for (auto& b : blocks_) {
      if (b->tasks_left == 0) return b.get();
    }
    cv_.Wait(mu_);
  }
}

bool DownloadTransfer::WaitTerm(DownloadBlock* block, size_t t) {
  MutexLock lock(mu_);
  while (block->term_ready[t] == 0 && !errors_.failed()) cv_.Wait(mu_);
  return !errors_.failed();
}

void DownloadTransfer::Release(DownloadBlock* block) {
  MutexLock lock(mu_);
  std::erase_if(blocks_, [&](const std::unique_ptr<DownloadBlock>& b) { return b.get() == block; });
}

size_t DownloadTransfer::blocks_in_flight() {
  MutexLock lock(mu_);
  return blocks_.size();
}

void DownloadTransfer::Drain() {
  MutexLock lock(mu_);
  while (!queue_.empty() || running_ != 0) cv_.Wait(mu_);
}

std::vector<std::tuple<Hash, uint32_t, uint32_t>> DownloadTransfer::cache_keys() {
  MutexLock lock(mu_);
  return cache_keys_;
}

void DownloadTransfer::WorkerLoop() {
  WorkerScratch scratch;
  for (;;) {
    Job job{};
    Lease lease;
    {
      MutexLock lock(mu_);
      while (!closing_ && queue_.empty()) cv_.Wait(mu_);
      if (queue_.empty()) return;
      job = queue_.front();
      queue_.pop_front();
      ++running_;
      if (!errors_.failed()) lease = LeaseBuffer(Charge(*job.block, job.task));
    }
    std::vector<std::vector<uint8_t>> dropped;  // freed outside the lock
    Status st = errors_.failed() || !lease.held
                    ? Status::Ok()
                    : RunTask(*job.block, job.task, scratch, lease.answer.buffer);
    // No write of this task may outlive it (a failed task skipped its Flush).
    if (Status w = scratch.writer.Settle(); st.ok()) st = std::move(w);
    {
      MutexLock lock(mu_);
      if (lease.held) ReturnBuffer(std::move(lease), dropped);
      --running_;
      --job.block->tasks_left;
      errors_.Set(std::move(st));
    }
    cv_.NotifyAll();
  }
}

DownloadTransfer::Lease DownloadTransfer::LeaseBuffer(uint64_t charge) {
  Lease lease;
  if (charge == 0) {  // a streamed task: no buffer
    lease.held = true;
    return lease;
  }
  std::vector<std::vector<uint8_t>> dropped;
  for (;;) {
    if (errors_.failed()) break;
    lease.held = answers_.TryLease(charge, &lease.answer, &dropped);
    if (lease.held) break;
    cv_.Wait(mu_);
  }
  MutexUnlock unlock(mu_);
  dropped.clear();
  if (lease.answer.fresh) {
    lease.answer.buffer.reserve(lease.answer.counted);
    AdviseHugePages(lease.answer.buffer.data(), lease.answer.buffer.capacity());
  }
  return lease;
}

void DownloadTransfer::ReturnBuffer(Lease lease, std::vector<std::vector<uint8_t>>& dropped) {
  if (lease.answer.counted == 0 && lease.answer.buffer.capacity() == 0) return;  // streamed
  answers_.Return(std::move(lease.answer), errors_.failed(), &dropped);
}

// What a task holds while it runs: its fetched bytes (or the cached copy of one of its
// ranges, which is smaller). Streaming also keeps the decoded bytes of its terms until the
// sink has them; those are bounded by the block window instead.
uint64_t DownloadTransfer::Charge(const DownloadBlock& b, size_t task_index) const {
  const FetchTask& task = b.plan.tasks[task_index];
  if (task.refs.size() == 1) return 0;  // streamed through (RunStreamedTask)
  return TaskSpanBytes(b.recon.xorbs[task.xorb].second[task.entry], task);
}

Status DownloadTransfer::RunTask(DownloadBlock& b, size_t task_index, WorkerScratch& s,
                                 std::vector<uint8_t>& buffer) {
  const FetchTask& task = b.plan.tasks[task_index];
  const auto& xorb = b.recon.xorbs[task.xorb];
  const FetchEntry& entry = xorb.second[task.entry];
  if (task.refs.size() == 1) {
    return RunStreamedTask(b, b.plan.ranges[task.refs[0]], entry, xorb.first, s);
  }
  std::vector<uint8_t> cached(task.refs.size(), 0);
  if (cache_ != nullptr) RunCachedRanges(b, task, s, buffer, cached);
  // The rest, in runs of consecutive ranges: one FetchRanges call per run.
  for (size_t i = 0; i < task.refs.size();) {
    if (cached[i]) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j + 1 < task.refs.size() && !cached[j + 1]) ++j;
    XET_RETURN_IF_ERROR(FetchRun(b, task, i, j, s, buffer));
    i = j + 1;
  }
  return Status::Ok();
}

void DownloadTransfer::RunCachedRanges(DownloadBlock& b, const FetchTask& task, WorkerScratch& s,
                                       std::vector<uint8_t>& buffer, std::vector<uint8_t>& cached) {
  const auto& xorb = b.recon.xorbs[task.xorb];
  const FetchEntry& entry = xorb.second[task.entry];
  for (size_t i = 0; i < task.refs.size(); ++i) {
    const RangeRef& ref = b.plan.ranges[task.refs[i]];
    const FetchRange& fr = entry.ranges[ref.range];
    ChunkCache::Entry hit;
    hit.records = std::move(buffer);
    const bool found = cache_->GetInto(xorb.first, fr.chunk_start, fr.chunk_end, hit);
    // A damaged entry is detected while it is decoded; the fetch then rewrites every byte
    // it had written.
    Status st =
        found ? ProcessRange(b, ref, fr.chunk_end - fr.chunk_start, hit.records, &hit.chunks, s)
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

Status DownloadTransfer::FetchRun(DownloadBlock& b, const FetchTask& task, size_t i, size_t j,
                                  WorkerScratch& s, std::vector<uint8_t>& buffer) {
  const auto& xorb = b.recon.xorbs[task.xorb];
  const FetchEntry& entry = xorb.second[task.entry];
  const size_t first = task.first_range + i;
  const size_t last = task.first_range + j;
  return cas_.FetchRanges(
      entry, first, last,
      [&](size_t r, std::span<const uint8_t> bytes) -> Status {
        if (errors_.failed()) return Status::Cancelled("download stopped");
        if (r < first || r > last) return Status::Internal("FetchRanges: unexpected range");
        const RangeRef& ref = b.plan.ranges[task.refs[r - task.first_range]];
        const FetchRange& fr = entry.ranges[ref.range];
        if (options_.stats) options_.stats->bytes_received += bytes.size();
        XET_RETURN_IF_ERROR(ProcessRange(b, ref, fr.chunk_end - fr.chunk_start, bytes, nullptr, s));
        if (cache_ != nullptr && mode_ == Mode::kFile) {
          // Only whole-file downloads insert: their file hash vouches for the chunks
          // (entries are dropped again if it does not match).
          if (cache_->Put(xorb.first, fr.chunk_start, fr.chunk_end, bytes, s.decoder.infos())
                  .ok()) {
            RememberCacheKey(xorb.first, fr);
          }
        }
        return Status::Ok();
      },
      &buffer);
}

Status DownloadTransfer::RunStreamedTask(DownloadBlock& b, const RangeRef& ref,
                                         const FetchEntry& entry, const Hash& xorb,
                                         WorkerScratch& s) {
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
  if (cache_entry && cache_entry->Commit(s.decoder.infos()).ok()) RememberCacheKey(xorb, fr);
  return Status::Ok();
}

void DownloadTransfer::RememberCacheKey(const Hash& xorb, const FetchRange& fr) {
  MutexLock lock(mu_);
  cache_keys_.emplace_back(xorb, fr.chunk_start, fr.chunk_end);
}

Status DownloadTransfer::ProcessRange(DownloadBlock& b, const RangeRef& ref, uint32_t num_chunks,
                                      std::span<const uint8_t> bytes,
                                      const std::vector<ChunkInfo>* expected, WorkerScratch& s) {
  XET_RETURN_IF_ERROR(ParseChunkRecords(bytes, num_chunks, &s.records));
  XET_RETURN_IF_ERROR(BeginRange(b, ref, num_chunks, expected, s));
  for (uint32_t i = 0; i < num_chunks; ++i) {
    const ChunkRecord& r = s.records[i];
    XET_RETURN_IF_ERROR(s.decoder.Chunk(i, r, bytes.subspan(r.payload, r.csize)));
  }
  return FinishRange(b, ref, s);
}

Status DownloadTransfer::DecodeStreamed(DownloadBlock& b, const RangeRef& ref, uint32_t num_chunks,
                                        uint64_t range_bytes,
                                        const std::vector<ChunkInfo>* expected, WorkerScratch& s,
                                        const std::function<Status(const PieceSink&)>& source) {
  XET_RETURN_IF_ERROR(BeginRange(b, ref, num_chunks, expected, s));
  s.stream.Reset(num_chunks, range_bytes);
  const ChunkRecordStream::RecordFn record = [&](uint32_t i, const ChunkRecord& r,
                                                 std::span<const uint8_t> payload) {
    return s.decoder.Chunk(i, r, payload);
  };
  const PieceSink decode = [&](std::span<const uint8_t> in) -> Status {
    if (errors_.failed()) return Status::Cancelled("download stopped");
    return s.stream.Feed(in, record);
  };
  XET_RETURN_IF_ERROR(source(decode));
  XET_RETURN_IF_ERROR(s.stream.Finish());
  return FinishRange(b, ref, s);
}

Status DownloadTransfer::BeginRange(DownloadBlock& b, const RangeRef& ref, uint32_t num_chunks,
                                    const std::vector<ChunkInfo>* expected, WorkerScratch& s) {
  // The sinks live for the range: the worker's scratch holds the one in use.
  if (mode_ == Mode::kFile) {
    s.file_sink.emplace(s.writer, b.plan.span.first);
  } else {
    s.stream_sink.emplace(b, term_buffers_);
  }
  TermSink& sink = mode_ == Mode::kFile ? static_cast<TermSink&>(*s.file_sink) : *s.stream_sink;
  XET_RETURN_IF_ERROR(s.decoder.Begin(b.plan, ref, num_chunks, expected, hash_chunks_, sink));
  s.writer.Reset(part_);
  return Status::Ok();
}

Status DownloadTransfer::FinishRange(DownloadBlock& b, const RangeRef& ref, WorkerScratch& s) {
  XET_RETURN_IF_ERROR(s.writer.Flush());
  XET_RETURN_IF_ERROR(s.decoder.Finish());
  const std::vector<ChunkInfo>& infos = s.decoder.infos();
  for (uint32_t ti : ref.terms) {
    const TermPlacement& p = b.plan.terms[ti];
    if (hash_chunks_) {
      b.term_chunks[ti].assign(infos.begin() + p.chunk_offset,
                               infos.begin() + p.chunk_offset + p.num_chunks);
    }
    if (mode_ == Mode::kStream) {
      {
        MutexLock lock(mu_);
        b.term_ready[ti] = 1;
      }
      cv_.NotifyAll();
    }
    if (options_.stats) options_.stats->bytes_done += p.take;
  }
  return Status::Ok();
}

}  // namespace xet
