#include "store/ops/storage_stats.h"

#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace xet {

namespace {

constexpr size_t kPage = 1000;

using XorbSizes = std::unordered_map<Hash, uint64_t, HashHasher>;

// Counts one bucket's stored xorbs from its entries' distinct files.
Status CountBucket(Index& index, const BucketRecord& bucket, const XorbSizes& sizes,
                   BucketStats* out) {
  std::unordered_set<Hash, HashHasher> files;
  std::string cursor;
  while (true) {
    XET_ASSIGN_OR_RETURN(
        BucketTreePage page,
        index.ListBucketTree(bucket.ns, bucket.name, "", /*recursive=*/true, cursor, kPage));
    for (const BucketTreeItem& item : page.items) {
      if (!item.is_directory) files.insert(item.entry.file_hash);
    }
    if (!page.next_cursor) break;
    cursor = std::move(*page.next_cursor);
  }
  out->distinct_files = files.size();
  std::unordered_set<Hash, HashHasher> xorbs;
  for (const Hash& file : files) {
    XET_ASSIGN_OR_RETURN(std::optional<FileRecord> record, index.GetFile(file));
    if (!record) continue;  // the empty file of a symlink, or a record fsck would report
    for (const FileTerm& term : record->terms) {
      if (!xorbs.insert(term.xorb_hash).second) continue;
      auto it = sizes.find(term.xorb_hash);
      if (it != sizes.end()) out->stored_bytes += it->second;
    }
  }
  out->xorbs = xorbs.size();
  return Status::Ok();
}

}  // namespace

double DedupRatio(uint64_t logical_bytes, uint64_t stored_bytes) {
  if (stored_bytes == 0) return 0;
  return static_cast<double>(logical_bytes) / static_cast<double>(stored_bytes);
}

Result<StorageStats> ComputeStorageStats(Index& index, const StatsOptions& options) {
  StorageStats stats;
  XorbSizes sizes;
  XET_RETURN_IF_ERROR(index.ForEachXorbRow([&](const Index::GcXorbRow& row) {
    sizes.emplace(row.hash, row.object_size);
    stats.xorbs += 1;
    stats.stored_bytes += row.object_size;
    return Status::Ok();
  }));

  bool found = options.bucket.empty();
  std::string after;
  while (true) {
    XET_ASSIGN_OR_RETURN(std::vector<BucketRecord> page, index.ListBuckets("", "", after, kPage));
    for (const BucketRecord& b : page) {
      stats.files += b.total_files;
      stats.logical_bytes += b.total_size;
      if (!options.bucket.empty() && b.FullName() != options.bucket) continue;
      found = true;
      BucketStats s;
      s.name = b.FullName();
      s.files = b.total_files;
      s.logical_bytes = b.total_size;
      XET_RETURN_IF_ERROR(CountBucket(index, b, sizes, &s));
      if (options.on_bucket) options.on_bucket(s);
      stats.buckets.push_back(std::move(s));
    }
    if (page.size() < kPage) break;
    after = page.back().FullName();
  }
  if (!found) return Status::NotFound("bucket " + options.bucket + " not found");
  return stats;
}

}  // namespace xet
