// SqliteIndex: the bucket part of the Index contract. (Placeholder until the bucket schema
// lands: every call answers Unimplemented.)
#include "store/sqlite_index.h"

namespace xet {
namespace {
Status NotYet() { return Status::Unimplemented("buckets are not implemented yet"); }
}  // namespace

Result<BucketRecord> SqliteIndex::CreateBucket(const std::string&, const std::string&, bool,
                                               int64_t) {
  return NotYet();
}
Result<std::optional<BucketRecord>> SqliteIndex::GetBucket(const std::string&, const std::string&) {
  return NotYet();
}
Result<std::vector<BucketRecord>> SqliteIndex::ListBuckets(const std::string&, const std::string&,
                                                           const std::string&, size_t) {
  return NotYet();
}
Status SqliteIndex::DeleteBucket(const std::string&, const std::string&) { return NotYet(); }
Status SqliteIndex::MoveBucket(const std::string&, const std::string&, const std::string&,
                               const std::string&, int64_t) {
  return NotYet();
}
Result<BucketBatchResult> SqliteIndex::ApplyBucketBatch(const std::string&, const std::string&,
                                                        const std::vector<BucketOp>&, int64_t) {
  return NotYet();
}
Result<std::optional<BucketEntry>> SqliteIndex::GetBucketEntry(const std::string&,
                                                               const std::string&,
                                                               const std::string&) {
  return NotYet();
}
Result<std::vector<BucketEntry>> SqliteIndex::GetBucketEntries(const std::string&,
                                                               const std::string&,
                                                               std::span<const std::string>) {
  return NotYet();
}
Result<BucketTreePage> SqliteIndex::ListBucketTree(const std::string&, const std::string&,
                                                   const std::string&, bool, const std::string&,
                                                   size_t) {
  return NotYet();
}

}  // namespace xet
