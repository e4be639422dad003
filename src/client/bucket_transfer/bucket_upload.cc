#include "client/bucket_transfer/bucket_upload.h"

#include "common/byte_source.h"

namespace xet {

Result<std::vector<UploadedFile>> UploadToBucket(RemoteConnection& conn,
                                                 const std::string& bucket_id,
                                                 std::span<const UploadJob> jobs,
                                                 const BucketUploadOptions& upload_options,
                                                 std::span<const std::string> delete_paths) {
  // The write token first, even for nothing to upload: an unknown bucket or a token without
  // the permission fails before any file is read.
  XET_ASSIGN_OR_RETURN(auto cas, conn.OpenCas(bucket_id, /*write=*/true));
  std::vector<UploadedFile> files;
  if (!jobs.empty()) {
    std::vector<UploadItem> items;
    items.reserve(jobs.size());
    for (const UploadJob& job : jobs) {
      UploadItem item;
      item.name = job.local_path == "-" ? std::string("<stdin>") : job.local_path;
      item.size_hint = job.size;
      item.open = [path = job.local_path] { return OpenFileSource(path); };
      items.push_back(std::move(item));
    }
    UploadOptions options;
    options.stats = upload_options.stats;
    options.compute_sha256 = upload_options.record_sha256;
    options.shard_cache_dir = conn.ShardCacheDir(bucket_id);
    Uploader uploader(cas->client(), options);
    XET_ASSIGN_OR_RETURN(files, uploader.Upload(items));
  }

  std::vector<RemoteOp> ops;
  ops.reserve(jobs.size() + delete_paths.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    RemoteOp op;
    op.kind = RemoteOp::Kind::kAddFile;
    op.path = jobs[i].remote_path;
    op.xet_hash = files[i].file_hash;
    op.mtime_ms = jobs[i].mtime_ms;
    ops.push_back(std::move(op));
  }
  for (const std::string& path : delete_paths) {
    RemoteOp op;
    op.kind = RemoteOp::Kind::kDeleteFile;
    op.path = path;
    ops.push_back(std::move(op));
  }
  if (ops.empty()) return files;
  XET_ASSIGN_OR_RETURN(BatchOutcome outcome, conn.hub().Batch(bucket_id, ops));
  if (!outcome.failed.empty()) {
    const auto& f = outcome.failed.front();
    std::string msg = "updating " + f.path + " in " + bucket_id + " failed: " + f.error;
    if (outcome.failed.size() > 1) {
      msg += " (and " + std::to_string(outcome.failed.size() - 1) + " more)";
    }
    return Status::Internal(msg);
  }
  return files;
}

}  // namespace xet
