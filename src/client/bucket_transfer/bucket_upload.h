// Uploading local files (or standard input) into a bucket, as `cp` and `sync` do: the
// Uploader sends the chunks the server does not have, then a batch of addFile operations
// registers the files under their paths. Files appear in the bucket only after all their
// data landed, and a batch request (up to 10,000 files) is applied atomically, so an upload
// that fails or is interrupted before the batch leaves the bucket unchanged.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "client/bucket_transfer/remote_connection.h"
#include "client/transfer_stats.h"
#include "client/upload/uploader.h"
#include "common/result.h"

namespace xet {

struct UploadJob {
  std::string local_path;   // "-" = standard input
  std::string remote_path;  // valid bucket path
  uint64_t size = 0;        // for progress; 0 when unknown (stdin)
  int64_t mtime_ms = 0;     // recorded as the entry's mtime; 0 = the upload time
};

struct BucketUploadOptions {
  TransferStats* stats = nullptr;  // counters, if given
  // Also compute each file's SHA-256 and record it in the shard's metadata extension (the
  // server keeps it with the file). Off by default, as in the Hub's own bucket clients:
  // buckets identify files by their Xet hash, and SHA-256 is one sequential pass over
  // every byte that cannot be split across cores.
  bool record_sha256 = false;
};

// Uploads `jobs` into `bucket_id` (write CAS tokens from `conn`) and registers them, in the
// same batch as deleteFile operations for `delete_paths` (valid bucket paths; `sync
// --delete`), so both land together; returns the uploaded files in the order of `jobs`.
// Errors: those of the Uploader and the Hub API as they are; a batch operation the server
// refused is Internal naming its path and the server's reason.
Result<std::vector<UploadedFile>> UploadToBucket(RemoteConnection& conn,
                                                 const std::string& bucket_id,
                                                 std::span<const UploadJob> jobs,
                                                 const BucketUploadOptions& options,
                                                 std::span<const std::string> delete_paths = {});

}  // namespace xet
