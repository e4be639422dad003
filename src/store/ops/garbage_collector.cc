#include "store/ops/garbage_collector.h"

#include <span>
#include <unordered_map>

#include "format/shard_parser.h"

namespace xet {
namespace {

// Pending deletions read per round.
constexpr size_t kPendingPage = 1000;
// A pending deletion this old was left by a run that died (a live run deletes its objects
// within seconds of retiring them); younger ones may belong to a run still going.
constexpr int64_t kAbandonedPendingMs = 10 * 60 * 1000;

// Candidates of one kind (xorbs or shards), retired a batch per index transaction; what a
// batch retired is counted and handed to `retired` (which deletes the objects).
class RetirementBatches {
 public:
  using Retire = std::function<Result<std::vector<Hash>>(std::span<const Hash>)>;
  using Retired = std::function<Status(const std::vector<Hash>&)>;

  RetirementBatches(size_t limit, Retire retire, Retired retired, uint64_t* freed,
                    uint64_t* bytes_freed)
      : limit_(limit),
        retire_(std::move(retire)),
        retired_(std::move(retired)),
        freed_(freed),
        bytes_freed_(bytes_freed) {}

  Status Add(const Hash& h, uint64_t size) {
    batch_.push_back(h);
    sizes_[h] = size;
    return batch_.size() >= limit_ ? Flush() : Status::Ok();
  }

  Status Flush() {
    if (batch_.empty()) return Status::Ok();
    XET_ASSIGN_OR_RETURN(std::vector<Hash> retired, retire_(batch_));
    for (const Hash& h : retired) {
      ++*freed_;
      *bytes_freed_ += sizes_[h];
    }
    batch_.clear();
    sizes_.clear();
    return retired_(retired);
  }

 private:
  size_t limit_;
  Retire retire_;
  Retired retired_;
  uint64_t* freed_;
  uint64_t* bytes_freed_;
  std::vector<Hash> batch_;
  std::unordered_map<Hash, uint64_t> sizes_;
};

}  // namespace

Result<GcReport> GarbageCollector::Run() {
  GcReport report;
  report.dry_run = options_.dry_run;
  if (options_.grace_ms < 0) return Status::InvalidArgument("gc: the grace period is negative");
  if (options_.batch == 0) options_.batch = 1;
  XET_ASSIGN_OR_RETURN(now_ms_, index_.IndexClockMs());
  cutoff_ms_ = now_ms_ - options_.grace_ms;
  report.cutoff_ms = cutoff_ms_;
  XET_RETURN_IF_ERROR(FinishPendingDeletions(report));
  XET_RETURN_IF_ERROR(CollectFiles(report));
  XET_RETURN_IF_ERROR(MarkReachableXorbs(report));
  if (options_.after_mark) XET_RETURN_IF_ERROR(options_.after_mark());
  XET_RETURN_IF_ERROR(RetireXorbs(report));
  XET_RETURN_IF_ERROR(RetireShards(report));
  return report;
}

Status GarbageCollector::DeleteObjects(const std::vector<std::string>& keys) {
  for (const std::string& key : keys) {
    XET_RETURN_IF_ERROR(objects_.Delete(key).WithContext("gc: delete " + key));
  }
  return index_.ForgetPendingDeletions(keys);
}

Status GarbageCollector::FinishPendingDeletions(GcReport& report) {
  while (true) {
    XET_ASSIGN_OR_RETURN(std::vector<std::string> keys,
                         index_.PendingDeletions(kPendingPage, now_ms_ - kAbandonedPendingMs));
    report.pending_finished += keys.size();
    if (options_.dry_run || keys.empty()) return Status::Ok();
    XET_RETURN_IF_ERROR(DeleteObjects(keys));
    if (keys.size() < kPendingPage) return Status::Ok();
  }
}

Status GarbageCollector::CollectFiles(GcReport& report) {
  std::vector<Hash> batch;
  auto flush = [&]() -> Status {
    if (batch.empty()) return Status::Ok();
    XET_ASSIGN_OR_RETURN(std::vector<Hash> freed,
                         index_.CollectFiles(batch, cutoff_ms_, options_.dry_run));
    report.files_freed += freed.size();
    if (options_.dry_run) dry_run_freed_files_.insert(freed.begin(), freed.end());
    batch.clear();
    return Status::Ok();
  };
  XET_RETURN_IF_ERROR(
      index_.ForEachFileRow(/*with_terms=*/false, [&](const Index::GcFileRow& f) -> Status {
        ++report.files_scanned;
        if (f.seen_at_ms >= cutoff_ms_) return Status::Ok();
        batch.push_back(f.hash);
        return batch.size() >= options_.batch ? flush() : Status::Ok();
      }));
  return flush();
}

Status GarbageCollector::MarkReachableXorbs(GcReport& report) {
  XET_RETURN_IF_ERROR(
      index_.ForEachFileRow(/*with_terms=*/true, [&](const Index::GcFileRow& f) -> Status {
        if (dry_run_freed_files_.contains(f.hash)) return Status::Ok();
        for (const FileTerm& t : f.terms) reachable_.insert(t.xorb_hash);
        return Status::Ok();
      }));
  report.xorbs_reachable = reachable_.size();
  return Status::Ok();
}

Status GarbageCollector::DeleteRetired(const std::vector<Hash>& retired,
                                       std::string (*key)(const Hash&)) {
  if (options_.dry_run) return Status::Ok();
  std::vector<std::string> keys;
  for (const Hash& h : retired) keys.push_back(key(h));
  return DeleteObjects(keys);
}

Status GarbageCollector::RetireXorbs(GcReport& report) {
  RetirementBatches batches(
      options_.batch,
      [&](std::span<const Hash> b) { return index_.RetireXorbs(b, cutoff_ms_, options_.dry_run); },
      [&](const std::vector<Hash>& retired) { return DeleteRetired(retired, XorbKey); },
      &report.xorbs_freed, &report.xorb_bytes_freed);
  XET_RETURN_IF_ERROR(index_.ForEachXorbRow([&](const Index::GcXorbRow& x) -> Status {
    ++report.xorbs_scanned;
    if (x.seen_at_ms >= cutoff_ms_ || reachable_.contains(x.hash)) return Status::Ok();
    return batches.Add(x.hash, x.object_size);
  }));
  return batches.Flush();
}

Result<bool> GarbageCollector::ShardIsGarbage(const Hash& shard, uint64_t* size, GcReport& report) {
  *size = 0;
  auto bytes = objects_.Get(ShardKey(shard));
  if (!bytes.ok()) {
    if (bytes.status().code() != Status::Code::kNotFound) return bytes.status();
    ++report.shards_unreadable;  // what its row records is unknown: fsck's to judge
    return false;
  }
  *size = bytes->size();
  auto parsed = ParseShard(*bytes);
  if (!parsed.ok()) {
    ++report.shards_unreadable;
    return false;
  }
  for (const FileInfo& f : parsed->files) {
    if (dry_run_freed_files_.contains(f.file_hash)) continue;
    XET_ASSIGN_OR_RETURN(bool recorded, index_.FileVisible(f.file_hash, {}));
    if (recorded) return false;
  }
  return true;
}

Status GarbageCollector::RetireShards(GcReport& report) {
  RetirementBatches batches(
      options_.batch,
      [&](std::span<const Hash> b) { return index_.RetireShards(b, cutoff_ms_, options_.dry_run); },
      [&](const std::vector<Hash>& retired) { return DeleteRetired(retired, ShardKey); },
      &report.shards_freed, &report.shard_bytes_freed);
  XET_RETURN_IF_ERROR(index_.ForEachShardRow([&](const Index::GcShardRow& s) -> Status {
    ++report.shards_scanned;
    if (s.seen_at_ms >= cutoff_ms_) return Status::Ok();
    uint64_t size = 0;
    XET_ASSIGN_OR_RETURN(bool garbage, ShardIsGarbage(s.hash, &size, report));
    return garbage ? batches.Add(s.hash, size) : Status::Ok();
  }));
  return batches.Flush();
}

}  // namespace xet
