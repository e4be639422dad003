// StorageStats: what a deployment stores and how well it deduplicates (`xetstore stats`),
// per bucket and in total, read from the index alone (no object is opened).
//
// Definitions:
// - logical bytes / files: the sums of the buckets' file entries (a file in two buckets, or
//   at two paths, counts each time), as the buckets' totals keep them;
// - stored bytes / xorbs (total): every xorb the index records (reachable or not: what gc
//   has not freed yet), by object size, with its chunk data as stored (compressed);
// - stored bytes / xorbs (bucket): the xorbs holding any chunk of the bucket's files; a xorb
//   shared by several buckets counts in each, so the buckets' figures do not add up to the
//   total;
// - dedup ratio: logical / stored bytes (0 when nothing is stored).
//
// Cost: one pass over the xorb rows, then per bucket one listing of its entries and one file
// record read per distinct file. Memory: ~100 bytes per recorded xorb (its size, looked up by
// the bucket pass) plus, for the bucket being counted, ~100 bytes per distinct file and per
// distinct xorb it references.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/index.h"

namespace xet {

struct BucketStats {
  std::string name;  // NAMESPACE/BUCKET
  uint64_t files = 0;
  uint64_t logical_bytes = 0;
  uint64_t distinct_files = 0;  // distinct file hashes among its entries
  uint64_t xorbs = 0;
  uint64_t stored_bytes = 0;
};

struct StorageStats {
  std::vector<BucketStats> buckets;  // ordered by name
  uint64_t files = 0;
  uint64_t logical_bytes = 0;
  uint64_t xorbs = 0;
  uint64_t stored_bytes = 0;
};

// logical / stored, 0 when stored is 0.
double DedupRatio(uint64_t logical_bytes, uint64_t stored_bytes);

struct StatsOptions {
  // Only this bucket ("NAMESPACE/BUCKET"); empty: every bucket. The totals then still cover
  // every bucket's logical bytes and every xorb.
  std::string bucket;
  // Called after each bucket is counted (for a progress display); may be empty.
  std::function<void(const BucketStats&)> on_bucket;
};

// Reads the statistics. NotFound if options.bucket names no bucket; the index's errors
// otherwise. A file record an entry names but the index lacks counts no xorb (fsck reports
// it).
Result<StorageStats> ComputeStorageStats(Index& index, const StatsOptions& options);

}  // namespace xet
