// DownloadTransfer: one download's fetch machinery. The caller plans blocks (StartBlock)
// and waits for them; worker threads (DownloadOptions::fetch_concurrency) run the blocks'
// fetch tasks: each takes the ranges it can from the chunk cache, fetches the rest
// (FetchRanges for several ranges into a budgeted answer buffer, StreamRange for one),
// checks and decodes the chunks (RangeDecoder) and puts the term bytes in place: into the
// part file through the worker's StagedWriter (kFile) or into each term's buffer
// (kStream). The first failure stops every worker and every wait. Workers are joined by
// the destructor on every path.
//
// Memory: see DownloadOptions. Answer buffers within max_bytes_in_flight (AnswerBuffers);
// per worker two staging buffers, a cache read buffer, one decoded chunk and one split
// record. Thread-safe, except that one caller drives StartBlock and the waits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <tuple>
#include <vector>

#include "client/cas/cas_client.h"
#include "client/download/answer_buffers.h"
#include "client/download/download_block.h"
#include "client/download/downloader.h"
#include "common/buffer_pool.h"
#include "common/first_error.h"
#include "common/mutex.h"
#include "common/result.h"
#include "common/uninitialized_buffer.h"
#include "common/worker_group.h"

namespace xet {

class ChunkCache;
class PartFile;

// Streaming plans at most this many blocks ahead of the sink (their decoded bytes wait
// in memory until the sink takes them).
inline constexpr size_t kStreamWindow = 4;

class DownloadTransfer {
 public:
  enum class Mode { kFile, kStream };

  // `cas`, `options`, `cache` (may be null) and `part` (kFile; null for kStream) must
  // outlive the transfer. `hash_chunks`: in kStream mode, also hash every chunk and keep
  // the hashes with their term (always done in kFile mode), so the caller can check the
  // file hash. Starts the workers.
  DownloadTransfer(CasClient& cas, const DownloadOptions& options, ChunkCache* cache, Mode mode,
                   PartFile* part, bool hash_chunks = false);
  // Stops and joins the workers (a queued task not yet started is dropped).
  ~DownloadTransfer();
  DownloadTransfer(const DownloadTransfer&) = delete;
  DownloadTransfer& operator=(const DownloadTransfer&) = delete;

  // Plans `span` (block `index` of the file) with one /v2/reconstructions request and
  // queues its fetch tasks. The block stays the transfer's until Release. Errors of the
  // request or the plan are returned (the transfer is not failed by them).
  Result<DownloadBlock*> StartBlock(const Hash& file_hash, uint64_t index, const ByteSpan& span);

  // Fails the transfer with `st` unless it failed already: workers stop at their next
  // check and every wait returns.
  void Fail(Status st);
  // The first failure, OK if none.
  Status error() { return errors_.status(); }

  // Waits until `block` has no tasks left; false when the transfer failed.
  bool WaitBlock(DownloadBlock* block);
  // Waits until some started block has no tasks left and returns it; nullptr when the
  // transfer failed.
  DownloadBlock* WaitAnyBlock();
  // Streaming: waits until term `t` of `block` is ready; false when the transfer failed.
  bool WaitTerm(DownloadBlock* block, size_t t);
  // Streaming: takes back a term's buffer once the sink is done with it.
  void RecycleTermBuffer(UninitializedBytes bytes) { term_buffers_.Give(std::move(bytes)); }
  // Drops a block once the caller is done with it (no task of it may still run).
  void Release(DownloadBlock* block);
  // Blocks started and not yet released.
  size_t blocks_in_flight();
  // Waits for every queued and running task to end (after a failure, before returning).
  void Drain();

  // Cache entries read or written during this transfer (to drop when the file fails).
  std::vector<std::tuple<Hash, uint32_t, uint32_t>> cache_keys();

 private:
  struct Job {
    DownloadBlock* block;
    size_t task;
  };
  // A lease from answers_, or a task that needs none (held: may run).
  struct Lease {
    bool held = false;
    AnswerBuffers::Lease answer;
  };
  struct WorkerScratch;
  class FileSink;
  class StreamSink;

  void WorkerLoop();
  // Waits until a buffer for `charge` bytes fits the budget; not held after a failure.
  // Frees dropped buffers and reserves a new one with mu_ released.
  Lease LeaseBuffer(uint64_t charge) REQUIRES(mu_);
  void ReturnBuffer(Lease lease, std::vector<std::vector<uint8_t>>& dropped) REQUIRES(mu_);
  // The answer bytes a task holds while it runs (0: streamed through, no buffer).
  uint64_t Charge(const DownloadBlock& b, size_t task_index) const;

  Status RunTask(DownloadBlock& b, size_t task_index, WorkerScratch& s,
                 std::vector<uint8_t>& buffer);
  // Ranges of the task the chunk cache holds intact; marks them in `cached`.
  void RunCachedRanges(DownloadBlock& b, const FetchTask& task, WorkerScratch& s,
                       std::vector<uint8_t>& buffer, std::vector<uint8_t>& cached);
  // Fetches task ranges [i, j] (relative to the task) in one FetchRanges call.
  Status FetchRun(DownloadBlock& b, const FetchTask& task, size_t i, size_t j, WorkerScratch& s,
                  std::vector<uint8_t>& buffer);
  // A task of one range: from the chunk cache when it has the range intact, else streamed
  // from the server (and, for whole files, into the cache as it arrives).
  Status RunStreamedTask(DownloadBlock& b, const RangeRef& ref, const FetchEntry& entry,
                         const Hash& xorb, WorkerScratch& s);
  void RememberCacheKey(const Hash& xorb, const FetchRange& fr);

  using PieceSink = std::function<Status(std::span<const uint8_t>)>;
  // Decodes one range held whole (fetched or cached) into its terms; see RangeDecoder.
  // With `expected` (a cache entry) every chunk is checked against it.
  Status ProcessRange(DownloadBlock& b, const RangeRef& ref, uint32_t num_chunks,
                      std::span<const uint8_t> bytes, const std::vector<ChunkInfo>* expected,
                      WorkerScratch& s);
  // The same for a range whose records arrive in pieces: `source` hands them, in order, to
  // the sink it is given.
  Status DecodeStreamed(DownloadBlock& b, const RangeRef& ref, uint32_t num_chunks,
                        uint64_t range_bytes, const std::vector<ChunkInfo>* expected,
                        WorkerScratch& s, const std::function<Status(const PieceSink&)>& source);
  // Starts decoding a range (the decoder, the staging writer).
  Status BeginRange(DownloadBlock& b, const RangeRef& ref, uint32_t num_chunks,
                    const std::vector<ChunkInfo>* expected, WorkerScratch& s);
  // After the range's last chunk: write out, check every term's length, publish.
  Status FinishRange(DownloadBlock& b, const RangeRef& ref, WorkerScratch& s);

  CasClient& cas_;
  const DownloadOptions& options_;
  ChunkCache* cache_;
  const Mode mode_;
  const bool hash_chunks_;
  PartFile* part_;
  const uint64_t max_task_bytes_;  // FetchRanges calls grouping several ranges
  // Streaming: the decoded-term buffers the sink has consumed, reused for later terms. A
  // term is often a whole block, and a new buffer that size is a fresh mapping, faulted in
  // page by page.
  BasicBufferPool<UninitializedBytes> term_buffers_{kStreamWindow + 1};

  Mutex mu_;
  CondVar cv_;  // signals a change of anything mu_ guards or of errors_
  std::deque<Job> queue_ GUARDED_BY(mu_);
  // Each block's tasks_left and term_ready are guarded by mu_ too (clang cannot name an
  // outer object's mutex on another class's members).
  std::vector<std::unique_ptr<DownloadBlock>> blocks_ GUARDED_BY(mu_);
  size_t running_ GUARDED_BY(mu_) = 0;
  AnswerBuffers answers_ GUARDED_BY(mu_);
  bool closing_ GUARDED_BY(mu_) = false;
  FirstError errors_;  // set under mu_, so that waiters on cv_ see it
  std::vector<std::tuple<Hash, uint32_t, uint32_t>> cache_keys_ GUARDED_BY(mu_);
  WorkerGroup workers_;  // last: started after everything above exists
};

}  // namespace xet
