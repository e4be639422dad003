// BucketBatchApplier: the rules of a bucket batch (Index::ApplyBucketBatch), the same on
// every backend: what each BucketOp checks before it writes, the error it reports, and which
// entries it writes, removes, stages or makes visible. A backend derives from it and supplies
// the storage steps (its SQL), each inside the batch's transaction.
//
// Use: ApplyBatch() (or Import()) inside the backend's transaction. Each op's own failure
// (unknown file, missing source, ...) is reported in its BucketOpResult, having written
// nothing; a non-OK Status is a storage failure and fails the whole batch.
//
// Accounting: the storage steps that write or remove entries add to delta_files_ and
// delta_size_ (file entries only) and set changed_; Finish() applies them to the bucket's
// totals. Entries whose file may have lost its last reference in this bucket are recorded by
// the backend, and Finish() drops the bucket's visibility of those that did.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"
#include "format/hash.h"
#include "protocol/posix_metadata.h"
#include "store/bucket_records.h"
#include "store/index_records.h"

namespace xet {

class BucketBatchApplier {
 public:
  virtual ~BucketBatchApplier() = default;
  BucketBatchApplier(const BucketBatchApplier&) = delete;
  BucketBatchApplier& operator=(const BucketBatchApplier&) = delete;

  // Index::ApplyBucketBatch's work: `ops` in order, each op's outcome in the result, then
  // the bucket's totals and visibility (Finish). Call once.
  Result<BucketBatchResult> ApplyBatch(std::span<const BucketOp> ops);

  // Index::ImportBucketEntries' entry steps: remove exactly the entries `remove` names (their
  // path and is_directory), if present; then write each of `put` exactly as given (its
  // uploaded_at_ms included), a file entry's file made visible to the bucket's scope first
  // (InvalidArgument if that file is not registered); then Finish. Call once.
  Status Import(std::span<const BucketEntry> put, std::span<const BucketEntry> remove);

 protected:
  BucketBatchApplier(int64_t bucket_id, Scope scope, int64_t now_ms)
      : bucket_id_(bucket_id), scope_(std::move(scope)), now_ms_(now_ms) {}

  // What one entry write puts at a path.
  struct NewEntry {
    const std::string* path;
    Hash file_hash;
    int64_t size;
    std::optional<Hash> sha256;
    int64_t mtime_ms;
    std::string_view content_type;
    const std::optional<PosixMetadata>* posix;
    bool directory = false;  // an explicit directory entry (stored at MarkerKey(path))
    std::optional<int64_t> uploaded_at_ms = std::nullopt;  // default: now_ms_
  };
  // A registered file's size and SHA-256.
  struct FileFacts {
    int64_t size = 0;
    std::optional<Hash> sha256;
  };
  // An entry a copy takes its defaults from.
  struct SourceEntry {
    int64_t size = 0;
    std::optional<Hash> sha256;
    int64_t mtime_ms = 0;
    std::string content_type;
  };
  // The entry at a path: its key (the path, or MarkerKey(path) for a directory entry).
  struct EntryAt {
    std::string key;
    Hash file_hash;
    bool is_file = false;
  };

  // --- storage steps, each within the batch's transaction ---
  // Before the first op: prepares the backend's staging (empty) for this batch.
  virtual Status Begin() = 0;
  // After the last op: drops the bucket's visibility of files that lost their last entry
  // and updates the bucket's totals and updated_at (when anything changed).
  virtual Status Finish() = 0;
  // The id of bucket ns/name, or nullopt if absent.
  virtual Result<std::optional<int64_t>> FindBucketId(std::string_view ns,
                                                      std::string_view name) = 0;
  // The record of `file` if it is registered and visible to scope_ (an invisible file
  // answers as an unknown one).
  virtual Result<std::optional<FileFacts>> VisibleFile(const Hash& file) = 0;
  // A file entry of bucket `bucket_id` pointing at `file`, if any.
  virtual Result<std::optional<SourceEntry>> EntryWithFile(int64_t bucket_id, const Hash& file) = 0;
  // Writes `e` (uploaded now_ms_), replacing what was at its key; a file entry also replaces
  // the directory entry at its path. Records a replaced file entry's file as maybe lost.
  virtual Status PutEntry(const NewEntry& e) = 0;
  // Removes the entries stored at keys `key` and `other_key` (which may be equal: a path, or
  // MarkerKey(path) for a directory entry); returns how many entries went (removed files
  // recorded as maybe lost).
  virtual Result<uint64_t> DeleteEntryKeys(const std::string& key,
                                           const std::string& other_key) = 0;
  // Makes `file` visible to scope_ if it is registered.
  virtual Status MakeVisible(const Hash& file) = 0;
  // Stages the entries of `source_id` at `from` or below `from` + "/", renamed to `to` + the
  // rest of their path (uploaded now_ms_). Returns how many.
  virtual Result<int64_t> StagePrefix(int64_t source_id, const std::string& from,
                                      const std::string& to) = 0;
  // Removes this bucket's entries at `from` and below `from` + "/".
  virtual Status DeletePrefix(const std::string& from) = 0;
  // Accounts for (and records as maybe lost) the entries the staged rows overwrite, then
  // writes them (files replacing the directory entries at their paths). `replace_sources`:
  // the staged rows are a move's renamed entries, whose sources were removed, so they add no
  // files or bytes.
  virtual Status WriteStaged(bool replace_sources) = 0;
  // Makes the staged files that are registered visible to scope_.
  virtual Status MakeStagedVisible() = 0;
  virtual Status ClearStaged() = 0;
  // Whether an entry is stored at key `key`.
  virtual Result<bool> EntryAtKey(const std::string& key) = 0;
  // Whether an entry is at `path` (with `include_exact`) or anywhere below `path` + "/".
  virtual Result<bool> AnythingAt(const std::string& path, bool include_exact) = 0;
  // The file entry at `path`, else the directory entry of `path`, if either exists.
  virtual Result<std::optional<EntryAt>> FindEntryAt(const std::string& path) = 0;
  // Replaces the POSIX metadata of the entry at `key`, and its mtime unless `mtime_ms` is 0.
  virtual Status UpdateMetadata(const std::string& key, const std::optional<PosixMetadata>& posix,
                                int64_t mtime_ms) = 0;

  const int64_t bucket_id_;
  const Scope scope_;
  const int64_t now_ms_;
  int64_t delta_files_ = 0;
  int64_t delta_size_ = 0;
  bool changed_ = false;

 private:
  Result<BucketOpResult> Apply(const BucketOp& op);
  Status ImportEntry(const BucketEntry& e);
  Status ImportRemoval(const BucketEntry& e);
  // The id of source bucket "NAMESPACE/BUCKET" ("" = this bucket), or nullopt if absent.
  Result<std::optional<int64_t>> SourceBucketId(const std::string& full_name);
  Result<BucketOpResult> AddFile(const BucketOp& op);
  Result<BucketOpResult> DeleteFile(const BucketOp& op);
  Result<BucketOpResult> CopyFile(const BucketOp& op);
  Result<BucketOpResult> CopyOrMovePrefix(const BucketOp& op, bool move);
  Result<BucketOpResult> AddDirectory(const BucketOp& op);
  Result<BucketOpResult> SetMetadata(const BucketOp& op);
  // An explicit directory entry at op.path with op's mtime and posix.
  Result<BucketOpResult> PutDirectory(const BucketOp& op);
};

}  // namespace xet
