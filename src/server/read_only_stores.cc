#include "server/read_only_stores.h"

#include <string>
#include <string_view>

namespace xet {
namespace {

constexpr std::string_view kReadOnlyMessage = "this server is read-only (maintenance); retry later";

class ReadOnlyIndexImpl final : public Index {
 public:
  explicit ReadOnlyIndexImpl(Index& inner) : inner_(inner) {}

  // Writes: refused.
  Result<bool> PutXorb(const XorbRecord&, const Scope&) override { return ReadOnlyRefusal(); }
  Result<ShardCommitResult> CommitShard(const ShardCommit&) override { return ReadOnlyRefusal(); }
  Result<BucketRecord> CreateBucket(const std::string&, const std::string&, bool,
                                    int64_t) override {
    return ReadOnlyRefusal();
  }
  Status DeleteBucket(const std::string&, const std::string&) override { return ReadOnlyRefusal(); }
  Status MoveBucket(const std::string&, const std::string&, const std::string&, const std::string&,
                    int64_t) override {
    return ReadOnlyRefusal();
  }
  Result<BucketBatchResult> ApplyBucketBatch(const std::string&, const std::string&,
                                             const std::vector<BucketOp>&, int64_t) override {
    return ReadOnlyRefusal();
  }
  Status PutToken(const TokenRecord&) override { return ReadOnlyRefusal(); }
  Status RevokeToken(const std::string&) override { return ReadOnlyRefusal(); }
  Result<std::vector<Hash>> CollectFiles(std::span<const Hash>, int64_t, bool) override {
    return ReadOnlyRefusal();
  }
  Result<std::vector<Hash>> RetireXorbs(std::span<const Hash>, int64_t, bool) override {
    return ReadOnlyRefusal();
  }
  Result<std::vector<Hash>> RetireShards(std::span<const Hash>, int64_t, bool) override {
    return ReadOnlyRefusal();
  }
  Status ForgetPendingDeletions(std::span<const std::string>) override { return ReadOnlyRefusal(); }
  Status ImportXorbs(std::span<const ExportedXorb>) override { return ReadOnlyRefusal(); }
  Status ImportFiles(std::span<const ExportedFile>) override { return ReadOnlyRefusal(); }
  Status ImportShards(std::span<const ExportedShard>) override { return ReadOnlyRefusal(); }
  Status ImportBucketEntries(const BucketRecord&, std::span<const BucketEntry>,
                             std::span<const BucketEntry>) override {
    return ReadOnlyRefusal();
  }
  // FindXorbsWithChunk stamps the xorbs it answers (a write), but only to protect them from
  // gc; a read-only node answers without protecting them, which matters only for an upload,
  // and uploads are refused.
  Result<std::vector<Hash>> FindXorbsWithChunk(const Hash& h, std::span<const Scope> s,
                                               size_t limit) override {
    return inner_.FindXorbsWithChunk(h, s, limit);
  }

  // Reads: forwarded.
  Result<std::optional<XorbRecord>> GetXorb(const Hash& h) override { return inner_.GetXorb(h); }
  Result<bool> HasXorb(const Hash& h) override { return inner_.HasXorb(h); }
  Result<bool> XorbVisible(const Hash& h, std::span<const Scope> s) override {
    return inner_.XorbVisible(h, s);
  }
  Result<std::vector<bool>> XorbsVisible(std::span<const Hash> h,
                                         std::span<const Scope> s) override {
    return inner_.XorbsVisible(h, s);
  }
  Status ForEachRecentXorb(const std::function<bool(XorbRecord)>& visit) override {
    return inner_.ForEachRecentXorb(visit);
  }
  Result<std::optional<FileRecord>> GetFile(const Hash& h) override { return inner_.GetFile(h); }
  Result<bool> FileVisible(const Hash& h, std::span<const Scope> s) override {
    return inner_.FileVisible(h, s);
  }
  Status ForEachRecentFile(const std::function<bool(FileRecord)>& visit) override {
    return inner_.ForEachRecentFile(visit);
  }
  Result<std::optional<BucketRecord>> GetBucket(const std::string& ns,
                                                const std::string& name) override {
    return inner_.GetBucket(ns, name);
  }
  Result<std::vector<BucketRecord>> ListBuckets(const std::string& ns, const std::string& search,
                                                const std::string& after, size_t limit) override {
    return inner_.ListBuckets(ns, search, after, limit);
  }
  Result<std::optional<BucketEntry>> GetBucketEntry(const std::string& ns, const std::string& name,
                                                    const std::string& path) override {
    return inner_.GetBucketEntry(ns, name, path);
  }
  Result<std::vector<BucketEntry>> GetBucketEntries(const std::string& ns, const std::string& name,
                                                    std::span<const std::string> paths) override {
    return inner_.GetBucketEntries(ns, name, paths);
  }
  Result<BucketTreePage> ListBucketTree(const std::string& ns, const std::string& name,
                                        const std::string& prefix, bool recursive,
                                        const std::string& cursor, size_t limit) override {
    return inner_.ListBucketTree(ns, name, prefix, recursive, cursor, limit);
  }
  Result<std::optional<TokenRecord>> FindTokenBySecretHash(const Hash& h) override {
    return inner_.FindTokenBySecretHash(h);
  }
  Result<std::vector<TokenRecord>> ListTokens() override { return inner_.ListTokens(); }
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
  Result<std::vector<std::string>> PendingDeletions(size_t limit, int64_t before_ms) override {
    return inner_.PendingDeletions(limit, before_ms);
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

 private:
  Index& inner_;
};

class ReadOnlyObjectStoreImpl final : public ObjectStore {
 public:
  explicit ReadOnlyObjectStoreImpl(ObjectStore& inner) : inner_(inner) {}

  Result<bool> Put(std::string_view, std::span<const uint8_t>) override {
    return ReadOnlyRefusal();
  }
  Result<bool> PutParts(std::string_view, std::span<const std::span<const uint8_t>>) override {
    return ReadOnlyRefusal();
  }
  Status Delete(std::string_view) override { return ReadOnlyRefusal(); }

  Result<uint64_t> Size(std::string_view key) override { return inner_.Size(key); }
  Status ReadRange(std::string_view key, uint64_t offset, std::span<uint8_t> out) override {
    return inner_.ReadRange(key, offset, out);
  }
  Result<std::vector<uint8_t>> Get(std::string_view key) override { return inner_.Get(key); }
  Result<UniqueFd> OpenFile(std::string_view key) override { return inner_.OpenFile(key); }
  Status List(std::string_view prefix,
              const std::function<Status(std::string_view, uint64_t)>& visit) override {
    return inner_.List(prefix, visit);
  }

 private:
  ObjectStore& inner_;
};

}  // namespace

Status ReadOnlyRefusal() { return Status::Unavailable(std::string(kReadOnlyMessage)); }

bool IsReadOnlyRefusal(const Status& status) {
  return status.code() == Status::Code::kUnavailable && status.message() == kReadOnlyMessage;
}

std::unique_ptr<Index> ReadOnlyIndex(Index& inner) {
  return std::make_unique<ReadOnlyIndexImpl>(inner);
}

std::unique_ptr<ObjectStore> ReadOnlyObjectStore(ObjectStore& inner) {
  return std::make_unique<ReadOnlyObjectStoreImpl>(inner);
}

}  // namespace xet
