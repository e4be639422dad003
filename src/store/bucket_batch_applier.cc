#include "store/bucket_batch_applier.h"

#include <cstdint>
#include <utility>

#include "store/bucket_keys.h"

namespace xet {

Result<BucketBatchResult> BucketBatchApplier::ApplyBatch(std::span<const BucketOp> ops) {
  BucketBatchResult result;
  result.ops.reserve(ops.size());
  XET_RETURN_IF_ERROR(Begin());
  for (const BucketOp& op : ops) {
    XET_ASSIGN_OR_RETURN(BucketOpResult r, Apply(op));
    if (r.ok) result.succeeded++;
    result.ops.push_back(std::move(r));
  }
  XET_RETURN_IF_ERROR(Finish());
  return result;
}

Status BucketBatchApplier::Import(std::span<const BucketEntry> put,
                                  std::span<const BucketEntry> remove) {
  XET_RETURN_IF_ERROR(Begin());
  for (const BucketEntry& e : remove) XET_RETURN_IF_ERROR(ImportRemoval(e));
  for (const BucketEntry& e : put) XET_RETURN_IF_ERROR(ImportEntry(e));
  return Finish();
}

Result<BucketOpResult> BucketBatchApplier::Apply(const BucketOp& op) {
  switch (op.kind) {
    case BucketOp::Kind::kAddFile:
      return AddFile(op);
    case BucketOp::Kind::kDeleteFile:
      return DeleteFile(op);
    case BucketOp::Kind::kCopyFile:
      return CopyFile(op);
    case BucketOp::Kind::kCopyPrefix:
      return CopyOrMovePrefix(op, /*move=*/false);
    case BucketOp::Kind::kMovePrefix:
      return CopyOrMovePrefix(op, /*move=*/true);
    case BucketOp::Kind::kAddDirectory:
      return AddDirectory(op);
    case BucketOp::Kind::kSetMetadata:
      return SetMetadata(op);
  }
  return BucketOpFailed("unknown operation");
}

Status BucketBatchApplier::ImportEntry(const BucketEntry& e) {
  if (!e.is_directory && !e.file_hash.IsZero()) {
    XET_RETURN_IF_ERROR(MakeVisible(e.file_hash));
    XET_ASSIGN_OR_RETURN(std::optional<FileFacts> file, VisibleFile(e.file_hash));
    if (!file) {
      return Status::InvalidArgument("file " + e.file_hash.ToHex() + " of " + e.path +
                                     " is not in the index");
    }
  }
  if (e.size > static_cast<uint64_t>(INT64_MAX)) {
    return Status::InvalidArgument("entry " + e.path + " is too large for the index");
  }
  NewEntry ne{&e.path,  e.file_hash,    static_cast<int64_t>(e.size),
              e.sha256, e.mtime_ms,     e.content_type,
              &e.posix, e.is_directory, e.uploaded_at_ms};
  return PutEntry(ne);
}

Status BucketBatchApplier::ImportRemoval(const BucketEntry& e) {
  const std::string key = e.is_directory ? MarkerKey(e.path) : e.path;
  return DeleteEntryKeys(key, key).status();
}

Result<std::optional<int64_t>> BucketBatchApplier::SourceBucketId(const std::string& full_name) {
  if (full_name.empty()) return std::optional<int64_t>(bucket_id_);
  auto split = SplitBucketFullName(full_name);
  if (!split) return std::optional<int64_t>();
  return FindBucketId(split->first, split->second);
}

Result<BucketOpResult> BucketBatchApplier::AddFile(const BucketOp& op) {
  NewEntry e{&op.path, op.file_hash, 0, std::nullopt, op.mtime_ms, op.content_type, &op.posix};
  if (op.posix && op.posix->IsContentless()) {
    // A symbolic link or special file is the empty file, which needs no upload: nothing to
    // look up.
    if (!op.file_hash.IsZero()) {
      return BucketOpFailed(
          "a symbolic link's or special file's xetHash must be the empty file's (64 zeros)");
    }
    XET_RETURN_IF_ERROR(PutEntry(e));
    return BucketOpDone(1);
  }
  if (op.posix && !op.posix->IsRegular()) {
    return BucketOpFailed(
        "addFile: posix mode must be a regular file, a symbolic link or a special file");
  }
  XET_ASSIGN_OR_RETURN(std::optional<FileFacts> file, VisibleFile(op.file_hash));
  if (!file) {
    return BucketOpFailed("file " + op.file_hash.ToHex() + " not found (upload its shard first)");
  }
  e.size = file->size;
  e.sha256 = file->sha256;
  XET_RETURN_IF_ERROR(PutEntry(e));
  return BucketOpDone(1);
}

Result<BucketOpResult> BucketBatchApplier::DeleteFile(const BucketOp& op) {
  // The file entry at the path and the directory entry of the path (at most one exists).
  XET_ASSIGN_OR_RETURN(const uint64_t removed, DeleteEntryKeys(op.path, MarkerKey(op.path)));
  return BucketOpDone(removed);  // 0: already absent, deleting is idempotent
}

Result<BucketOpResult> BucketBatchApplier::CopyFile(const BucketOp& op) {
  XET_ASSIGN_OR_RETURN(std::optional<int64_t> source_id, SourceBucketId(op.source_bucket));
  if (!source_id) return BucketOpFailed("source bucket " + op.source_bucket + " not found");
  XET_ASSIGN_OR_RETURN(std::optional<SourceEntry> source, EntryWithFile(*source_id, op.file_hash));
  if (!source) {
    return BucketOpFailed("file " + op.file_hash.ToHex() + " not found in bucket " +
                          (op.source_bucket.empty() ? scope_ : op.source_bucket));
  }
  NewEntry e{&op.path,    op.file_hash,    source->size, source->sha256,
             op.mtime_ms, op.content_type, &op.posix};
  if (e.mtime_ms == 0) e.mtime_ms = source->mtime_ms;
  if (e.content_type.empty()) e.content_type = source->content_type;
  XET_RETURN_IF_ERROR(PutEntry(e));
  // A symbolic link's empty file may be unregistered: nothing to make visible then.
  XET_RETURN_IF_ERROR(MakeVisible(op.file_hash));
  return BucketOpDone(1);
}

Result<BucketOpResult> BucketBatchApplier::CopyOrMovePrefix(const BucketOp& op, bool move) {
  const char* verb = move ? "move" : "copy";
  if (op.from.empty() || op.to.empty()) {
    return BucketOpFailed(std::string(verb) + ": source and target paths must not be empty");
  }
  XET_ASSIGN_OR_RETURN(std::optional<int64_t> source_id,
                       SourceBucketId(move ? std::string() : op.source_bucket));
  if (!source_id) return BucketOpFailed("source bucket " + op.source_bucket + " not found");
  const bool same_bucket = *source_id == bucket_id_;
  if (move && op.to.starts_with(DirLower(op.from))) {
    return BucketOpFailed("cannot move " + op.from + " into itself (" + op.to + ")");
  }
  if (op.no_replace) {
    XET_ASSIGN_OR_RETURN(const bool taken, AnythingAt(op.to, /*include_exact=*/true));
    if (taken) return BucketOpFailed(op.to + " exists");
  }
  XET_ASSIGN_OR_RETURN(const int64_t matched, StagePrefix(*source_id, op.from, op.to));
  if (matched == 0) return BucketOpFailed("nothing at " + op.from);
  if (same_bucket && op.from == op.to) {  // every entry maps onto itself
    XET_RETURN_IF_ERROR(ClearStaged());
    return BucketOpDone(0);
  }
  if (move) XET_RETURN_IF_ERROR(DeletePrefix(op.from));
  XET_RETURN_IF_ERROR(WriteStaged(/*replace_sources=*/move));
  if (!same_bucket) XET_RETURN_IF_ERROR(MakeStagedVisible());
  XET_RETURN_IF_ERROR(ClearStaged());
  return BucketOpDone(static_cast<uint64_t>(matched));
}

Result<BucketOpResult> BucketBatchApplier::AddDirectory(const BucketOp& op) {
  if (op.posix && !op.posix->IsDirectory()) {
    return BucketOpFailed("addDirectory: posix mode must be a directory's (0040000)");
  }
  XET_ASSIGN_OR_RETURN(const bool file_there, EntryAtKey(op.path));
  if (file_there) return BucketOpFailed("a file exists at " + op.path);
  return PutDirectory(op);
}

Result<BucketOpResult> BucketBatchApplier::PutDirectory(const BucketOp& op) {
  NewEntry e{&op.path, Hash(), 0, std::nullopt, op.mtime_ms, std::string_view(), &op.posix, true};
  XET_RETURN_IF_ERROR(PutEntry(e));
  return BucketOpDone(1);
}

Result<BucketOpResult> BucketBatchApplier::SetMetadata(const BucketOp& op) {
  if (!op.posix) return BucketOpFailed("setMetadata needs \"posix\"");
  const PosixMetadata& posix = *op.posix;
  XET_ASSIGN_OR_RETURN(std::optional<EntryAt> at, FindEntryAt(op.path));
  if (!at) {  // an implied directory gets an explicit entry
    XET_ASSIGN_OR_RETURN(const bool implied, AnythingAt(op.path, /*include_exact=*/false));
    if (!implied) return BucketOpFailed("nothing at " + op.path);
    if (!posix.IsDirectory()) {
      return BucketOpFailed(op.path + " is a directory; its posix mode must be a directory's");
    }
    return PutDirectory(op);
  }
  if (at->is_file) {
    if (posix.IsDirectory()) return BucketOpFailed(op.path + " is a file, not a directory");
    if (posix.IsContentless() && !at->file_hash.IsZero()) {
      return BucketOpFailed(op.path +
                            " has content; a symbolic link or special file is the empty file");
    }
  } else if (!posix.IsDirectory()) {
    return BucketOpFailed(op.path + " is a directory; its posix mode must be a directory's");
  }
  XET_RETURN_IF_ERROR(UpdateMetadata(at->key, op.posix, op.mtime_ms));
  changed_ = true;
  return BucketOpDone(1);
}

}  // namespace xet
