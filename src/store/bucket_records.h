// The records of the bucket layer: buckets (S3-like, mutable, non-versioned namespaces of
// files named "NAMESPACE/BUCKET"), their entries (a path pointing at a Xet file), and the
// operations a batch applies to them.
//
// A bucket's Scope (store/index_records.h) is its full name "NAMESPACE/BUCKET": files and
// xorbs uploaded with a token for the bucket are visible to that scope, and so are the
// files its entries point at. Renaming a bucket rewrites that scope in one transaction.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "format/hash.h"
#include "protocol/posix_metadata.h"

namespace xet {

struct BucketRecord {
  std::string ns;    // namespace
  std::string name;  // bucket name within the namespace
  bool is_private = true;
  int64_t created_at_ms = 0;  // unix milliseconds
  int64_t updated_at_ms = 0;  // last change of the bucket or its entries
  uint64_t total_size = 0;    // sum of the entries' sizes
  uint64_t total_files = 0;   // number of file entries (directory entries not counted)
  // +1 for every committed batch that changed at least one entry, and for every move of the
  // bucket: "has anything changed?" in one row read.
  uint64_t generation = 0;

  // "NAMESPACE/BUCKET", also the bucket's Scope.
  std::string FullName() const { return ns + "/" + name; }
  friend bool operator==(const BucketRecord&, const BucketRecord&) = default;
};

// A file entry (a path pointing at a Xet file; with POSIX metadata of a symbolic link, at
// the empty file), or an explicit directory entry (is_directory: a directory that exists
// even when nothing is below it; file_hash zero, size 0, no content type or sha256).
struct BucketEntry {
  std::string path;  // a valid bucket path (see protocol/bucket_path.h)
  bool is_directory = false;
  Hash file_hash;
  uint64_t size = 0;                   // the file's size (from its file record)
  int64_t mtime_ms = 0;                // client-supplied modification time; 0 = unknown
  int64_t uploaded_at_ms = 0;          // when this entry was last written
  std::string content_type;            // empty = unknown
  std::optional<Hash> sha256;          // the file's SHA-256 if its shard carried one
  std::optional<PosixMetadata> posix;  // validated (ValidatePosix) when set
  friend bool operator==(const BucketEntry&, const BucketEntry&) = default;
};

// One operation of a batch. Paths are validated by the caller before they reach the Index.
struct BucketOp {
  enum class Kind {
    // path := file_hash. The file must be registered and visible to the bucket's scope.
    kAddFile,
    // Removes path. Removing a path that does not exist succeeds (idempotent, as S3).
    kDeleteFile,
    // path := file_hash, where source_bucket (FULL name; empty = this bucket) has an entry
    // pointing at file_hash; the file becomes visible to this bucket. mtime_ms and
    // content_type default (0, "") to those of a source entry. The caller has checked that
    // it may read source_bucket.
    kCopyFile,
    // Every entry of source_bucket (empty = this bucket) whose path is `from` or starts
    // with `from` + "/" is copied to `to` + the rest of its path (a directory copy); the
    // source is unchanged. Metadata only. Entries at the target paths are overwritten; the
    // copies are taken as the source was before the op (so copying a directory into its own
    // subdirectory is allowed). Fails ("nothing at <from>") if nothing matches.
    kCopyPrefix,
    // As kCopyPrefix within this bucket, then the sources are removed (a directory
    // rename). Metadata only. Fails if `to` is below `from` (a move into itself), and with
    // no_replace ("TO exists") when any entry is at `to` or below `to` + "/".
    kMovePrefix,
    // An explicit directory entry at path (created or replaced, with mtime_ms and posix).
    // Fails ("a file exists at PATH") when a file entry is at path.
    kAddDirectory,
    // Replaces the posix metadata (and mtime_ms unless 0) of the entry at path, keeping its
    // content: a file entry (posix a regular file, or a symbolic link or special file if it
    // points at the empty file), a directory entry, or an implied directory (one with
    // entries below it),
    // which gets a directory entry. Fails ("nothing at PATH") otherwise.
    kSetMetadata,
  };
  Kind kind = Kind::kAddFile;
  std::string path;  // kAddFile, kDeleteFile, kCopyFile: the target path
  Hash file_hash;    // kAddFile, kCopyFile
  int64_t mtime_ms = 0;
  std::string content_type;
  std::string source_bucket;  // kCopyFile, kCopyPrefix: "NAMESPACE/BUCKET"
  std::string from;           // kCopyPrefix, kMovePrefix: source path or directory
  std::string to;             // kCopyPrefix, kMovePrefix: target path or directory
  // kAddFile (posix of a regular file, symbolic link or special file; a symbolic link's or
  // special file's file_hash is zero and needs no registered file), kAddDirectory (a directory's),
  // kSetMetadata (required).
  std::optional<PosixMetadata> posix;
  bool no_replace = false;  // kMovePrefix
};

// What happened to one operation of a batch, in the batch's order. The errors clients see
// (H = the file hash in hex): "file H not found (upload its shard first)" (kAddFile: unknown
// or invisible file), "file H not found in bucket B" (kCopyFile: no entry of B points at
// it), "source bucket B not found", "nothing at FROM", "cannot move FROM into itself (TO)".
struct BucketOpResult {
  bool ok = true;
  std::string error;             // why it failed, one line, when !ok
  uint64_t entries_changed = 0;  // entries written or removed (0: the op changed nothing)
};

struct BucketBatchResult {
  std::vector<BucketOpResult> ops;
  uint64_t succeeded = 0;
};

// One item of a listing: a file entry, or a directory: in non-recursive listings one that
// holds entries below it or has an explicit directory entry; in recursive listings only
// explicit directory entries. A directory is listed once either way.
struct BucketTreeItem {
  bool is_directory = false;
  std::string path;  // the file's path (= entry.path) or the directory's, without trailing '/'
  // Files: the entry. Directories with an explicit entry: that entry (is_directory set);
  // other directories: default.
  BucketEntry entry;
};

struct BucketTreePage {
  std::vector<BucketTreeItem> items;
  // When more items follow: the opaque cursor to pass to get the next page.
  std::optional<std::string> next_cursor;
};

}  // namespace xet
