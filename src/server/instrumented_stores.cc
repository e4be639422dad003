#include "server/instrumented_stores.h"

#include "server/storage_errors.h"

namespace xet {
namespace {

// A failure is any status except OK; for the object store, NotFound is an answer, not a
// failure. A failure also goes to `reporter`, which logs and counts the disk's failures and
// may pass on a different status (see StorageErrorReporter::Report). Takes the result by
// value and moves it out: results can be large (a file's terms, a listing page) and must
// not be copied on their way through.
template <typename T>
T Count(T result, Counter& errors, StorageErrorReporter& reporter, StorageOp op,
        bool not_found_is_ok = false) {
  const Status st = [&] {
    if constexpr (std::is_same_v<T, Status>) {
      return result;
    } else {
      return result.status();
    }
  }();
  if (st.ok() || (not_found_is_ok && st.code() == Status::Code::kNotFound)) return result;
  errors.Increment();
  return T(reporter.Report(st, op));
}

class InstrumentedIndex final : public Index {
 public:
  InstrumentedIndex(Index& inner, Metrics& m)
      : inner_(inner),
        errors_(m.GetCounter("xetstore_index_errors_total",
                             "Index (metadata database) operations that failed.")),
        reporter_(m, StorageArea::kIndex) {}

  Result<bool> PutXorb(const XorbRecord& x, const Scope& s) override {
    return Count(inner_.PutXorb(x, s), errors_, reporter_, StorageOp::kWrite);
  }
  Result<std::optional<XorbRecord>> GetXorb(const Hash& h) override {
    return Count(inner_.GetXorb(h), errors_, reporter_, StorageOp::kRead);
  }
  Result<bool> HasXorb(const Hash& h) override {
    return Count(inner_.HasXorb(h), errors_, reporter_, StorageOp::kRead);
  }
  Status ForEachRecentXorb(const std::function<bool(XorbRecord)>& visit) override {
    return Count(inner_.ForEachRecentXorb(visit), errors_, reporter_, StorageOp::kRead);
  }
  Result<bool> XorbVisible(const Hash& h, std::span<const Scope> s) override {
    return Count(inner_.XorbVisible(h, s), errors_, reporter_, StorageOp::kRead);
  }
  Result<std::vector<bool>> XorbsVisible(std::span<const Hash> h,
                                         std::span<const Scope> s) override {
    return Count(inner_.XorbsVisible(h, s), errors_, reporter_, StorageOp::kRead);
  }
  Result<ShardCommitResult> CommitShard(const ShardCommit& c) override {
    return Count(inner_.CommitShard(c), errors_, reporter_, StorageOp::kWrite);
  }
  Result<std::optional<FileRecord>> GetFile(const Hash& h) override {
    return Count(inner_.GetFile(h), errors_, reporter_, StorageOp::kRead);
  }
  Result<bool> FileVisible(const Hash& h, std::span<const Scope> s) override {
    return Count(inner_.FileVisible(h, s), errors_, reporter_, StorageOp::kRead);
  }
  Status ForEachRecentFile(const std::function<bool(FileRecord)>& visit) override {
    return Count(inner_.ForEachRecentFile(visit), errors_, reporter_, StorageOp::kRead);
  }
  Result<std::vector<Hash>> FindXorbsWithChunk(const Hash& h, std::span<const Scope> s,
                                               size_t limit) override {
    return Count(inner_.FindXorbsWithChunk(h, s, limit), errors_, reporter_, StorageOp::kRead);
  }
  Result<BucketRecord> CreateBucket(const std::string& ns, const std::string& name, bool priv,
                                    int64_t now_ms) override {
    return Count(inner_.CreateBucket(ns, name, priv, now_ms), errors_, reporter_,
                 StorageOp::kWrite);
  }
  Result<std::optional<BucketRecord>> GetBucket(const std::string& ns,
                                                const std::string& name) override {
    return Count(inner_.GetBucket(ns, name), errors_, reporter_, StorageOp::kRead);
  }
  Result<std::vector<BucketRecord>> ListBuckets(const std::string& ns, const std::string& search,
                                                const std::string& after, size_t limit) override {
    return Count(inner_.ListBuckets(ns, search, after, limit), errors_, reporter_,
                 StorageOp::kRead);
  }
  Status DeleteBucket(const std::string& ns, const std::string& name) override {
    return Count(inner_.DeleteBucket(ns, name), errors_, reporter_, StorageOp::kWrite, true);
  }
  Status MoveBucket(const std::string& from_ns, const std::string& from_name,
                    const std::string& to_ns, const std::string& to_name, int64_t now_ms) override {
    return Count(inner_.MoveBucket(from_ns, from_name, to_ns, to_name, now_ms), errors_, reporter_,
                 StorageOp::kWrite, true);
  }
  Result<BucketBatchResult> ApplyBucketBatch(const std::string& ns, const std::string& name,
                                             const std::vector<BucketOp>& ops,
                                             int64_t now_ms) override {
    return Count(inner_.ApplyBucketBatch(ns, name, ops, now_ms), errors_, reporter_,
                 StorageOp::kWrite, true);
  }
  Result<std::optional<BucketEntry>> GetBucketEntry(const std::string& ns, const std::string& name,
                                                    const std::string& path) override {
    return Count(inner_.GetBucketEntry(ns, name, path), errors_, reporter_, StorageOp::kRead, true);
  }
  Result<std::vector<BucketEntry>> GetBucketEntries(const std::string& ns, const std::string& name,
                                                    std::span<const std::string> paths) override {
    return Count(inner_.GetBucketEntries(ns, name, paths), errors_, reporter_, StorageOp::kRead,
                 true);
  }
  Result<BucketTreePage> ListBucketTree(const std::string& ns, const std::string& name,
                                        const std::string& prefix, bool recursive,
                                        const std::string& cursor, size_t limit) override {
    return Count(inner_.ListBucketTree(ns, name, prefix, recursive, cursor, limit), errors_,
                 reporter_, StorageOp::kRead, true);
  }
  Status PutToken(const TokenRecord& t) override {
    return Count(inner_.PutToken(t), errors_, reporter_, StorageOp::kWrite);
  }
  Result<std::optional<TokenRecord>> FindTokenBySecretHash(const Hash& h) override {
    return Count(inner_.FindTokenBySecretHash(h), errors_, reporter_, StorageOp::kRead);
  }
  Result<std::vector<TokenRecord>> ListTokens() override {
    return Count(inner_.ListTokens(), errors_, reporter_, StorageOp::kRead);
  }
  Status RevokeToken(const std::string& id) override {
    return Count(inner_.RevokeToken(id), errors_, reporter_, StorageOp::kWrite, true);
  }
  // Operator tools: not used by a serving node; forwarded unmeasured.
  Result<int64_t> IndexClockMs() override { return inner_.IndexClockMs(); }
  Status ForEachXorbRow(const std::function<Status(const GcXorbRow&)>& visit) override {
    return inner_.ForEachXorbRow(visit);
  }
  Status ForEachFileRow(bool with_terms,
                        const std::function<Status(const GcFileRow&)>& visit) override {
    return inner_.ForEachFileRow(with_terms, visit);
  }
  Status ForEachShardRow(const std::function<Status(const GcShardRow&)>& visit) override {
    return inner_.ForEachShardRow(visit);
  }
  Result<std::vector<Hash>> CollectFiles(std::span<const Hash> files, int64_t cutoff_ms,
                                         bool dry_run) override {
    return inner_.CollectFiles(files, cutoff_ms, dry_run);
  }
  Result<std::vector<Hash>> RetireXorbs(std::span<const Hash> xorbs, int64_t cutoff_ms,
                                        bool dry_run) override {
    return inner_.RetireXorbs(xorbs, cutoff_ms, dry_run);
  }
  Result<std::vector<Hash>> RetireShards(std::span<const Hash> shards, int64_t cutoff_ms,
                                         bool dry_run) override {
    return inner_.RetireShards(shards, cutoff_ms, dry_run);
  }
  Result<std::vector<std::string>> PendingDeletions(size_t limit,
                                                    int64_t retired_before_ms) override {
    return inner_.PendingDeletions(limit, retired_before_ms);
  }
  Status ForgetPendingDeletions(std::span<const std::string> keys) override {
    return inner_.ForgetPendingDeletions(keys);
  }
  Result<std::vector<ExportedXorb>> ExportXorbs(int64_t after, size_t limit) override {
    return inner_.ExportXorbs(after, limit);
  }
  Result<std::vector<ExportedFile>> ExportFiles(int64_t after, size_t limit) override {
    return inner_.ExportFiles(after, limit);
  }
  Result<std::vector<ExportedShard>> ExportShards(const Hash& after, size_t limit) override {
    return inner_.ExportShards(after, limit);
  }
  Status ImportXorbs(std::span<const ExportedXorb> xorbs) override {
    return inner_.ImportXorbs(xorbs);
  }
  Status ImportFiles(std::span<const ExportedFile> files) override {
    return inner_.ImportFiles(files);
  }
  Status ImportShards(std::span<const ExportedShard> shards) override {
    return inner_.ImportShards(shards);
  }
  Status ImportBucketEntries(const BucketRecord& bucket, std::span<const BucketEntry> put,
                             std::span<const BucketEntry> remove) override {
    return inner_.ImportBucketEntries(bucket, put, remove);
  }

 private:
  Index& inner_;
  Counter& errors_;
  StorageErrorReporter reporter_;
};

class InstrumentedObjectStore final : public ObjectStore {
 public:
  InstrumentedObjectStore(ObjectStore& inner, Metrics& m)
      : inner_(inner),
        put_errors_(Errors(m, "put")),
        read_errors_(Errors(m, "read")),
        delete_errors_(Errors(m, "delete")),
        reporter_(m, StorageArea::kObjects) {}

  Result<bool> Put(std::string_view key, std::span<const uint8_t> data) override {
    return Count(inner_.Put(key, data), put_errors_, reporter_, StorageOp::kWrite);
  }
  Result<bool> PutParts(std::string_view key,
                        std::span<const std::span<const uint8_t>> parts) override {
    return Count(inner_.PutParts(key, parts), put_errors_, reporter_, StorageOp::kWrite);
  }
  Result<uint64_t> Size(std::string_view key) override {
    return Count(inner_.Size(key), read_errors_, reporter_, StorageOp::kRead, true);
  }
  Status ReadRange(std::string_view key, uint64_t offset, std::span<uint8_t> out) override {
    return Count(inner_.ReadRange(key, offset, out), read_errors_, reporter_, StorageOp::kRead,
                 true);
  }
  Result<std::vector<uint8_t>> Get(std::string_view key) override {
    return Count(inner_.Get(key), read_errors_, reporter_, StorageOp::kRead, true);
  }
  Result<UniqueFd> OpenFile(std::string_view key) override {
    auto file = inner_.OpenFile(key);
    if (!file.ok() && file.status().code() == Status::Code::kUnimplemented) return file;
    return Count(std::move(file), read_errors_, reporter_, StorageOp::kRead, true);
  }
  Status Delete(std::string_view key) override {
    return Count(inner_.Delete(key), delete_errors_, reporter_, StorageOp::kWrite);
  }
  Status List(std::string_view prefix,
              const std::function<Status(std::string_view, uint64_t)>& visit) override {
    return Count(inner_.List(prefix, visit), read_errors_, reporter_, StorageOp::kRead, true);
  }

 private:
  static Counter& Errors(Metrics& m, const char* op) {
    return m.GetCounter("xetstore_object_store_errors_total",
                        "Object store operations that failed.", {{"op", op}});
  }
  ObjectStore& inner_;
  Counter& put_errors_;
  Counter& read_errors_;
  Counter& delete_errors_;
  StorageErrorReporter reporter_;
};

}  // namespace

std::unique_ptr<Index> InstrumentIndex(Index& inner, Metrics& metrics) {
  return std::make_unique<InstrumentedIndex>(inner, metrics);
}

std::unique_ptr<ObjectStore> InstrumentObjectStore(ObjectStore& inner, Metrics& metrics) {
  return std::make_unique<InstrumentedObjectStore>(inner, metrics);
}

}  // namespace xet
