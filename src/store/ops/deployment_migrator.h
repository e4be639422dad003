// DeploymentMigrator: copies a deployment (an index and its object store) to another one
// (`xetstore migrate`): SQLite + a directory to PostgreSQL + S3, and back, or any other pair
// of backends. The source is only read, so its nodes keep serving while a copy runs.
//
// One run, in this order (so the destination never holds a row whose object it lacks, nor a
// file whose xorbs it lacks):
//  1. Xorbs, a page at a time in the order they were stored: each page's objects are copied
//     (those the destination lacks, or holds at another size), then its rows imported
//     (Index::ImportXorbs: record, liveness stamp, visibility, dedup rows).
//  2. Files, the same way (Index::ImportFiles).
//  3. Shards: objects, then rows (Index::ImportShards). Shards have no storage order, so
//     every run pages through all of them, alongside the destination's shard rows: one
//     already there costs no object lookup.
//  4. Buckets: each source bucket's entries are merged, in key order, with the
//     destination's, and the difference applied (Index::ImportBucketEntries): entries
//     absent from the source are removed, others written as the source has them (upload
//     times, POSIX metadata and all). Destination buckets the source lacks are reported,
//     and deleted only with delete_extra_buckets.
//  5. Tokens (every one, revoked ones included; replaced by id).
//
// Resumable: every step is idempotent, and the checkpoint (the last xorb and file row of the
// source imported) lets a rerun skip what an earlier run copied. A run started while the
// source takes writes copies what was there when each page was read; a second run (after
// writes stop, e.g. with the nodes in --read-only) copies what changed since: rows stored
// later have higher row ids, and bucket entries are compared whole. Rows the source lost to
// gc meanwhile stay in the destination until its own gc.
//
// Memory: one page of rows (xorbs: `page` records of ~40 KiB; files: file_page records, up
// to ~4.4 MiB each for a 100,000-term file) plus copy_threads whole objects (xorbs up to
// ~64 MiB).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "store/index.h"
#include "store/object_store.h"

namespace xet {

// How far earlier runs got: source row ids whose rows (and objects) are in the destination.
struct MigrateCheckpoint {
  int64_t xorbs_after = 0;
  int64_t files_after = 0;
  friend bool operator==(const MigrateCheckpoint&, const MigrateCheckpoint&) = default;
};

struct MigrateReport {
  uint64_t xorbs = 0;  // rows imported (already present ones included)
  uint64_t files = 0;
  uint64_t shards = 0;
  uint64_t objects_copied = 0;
  uint64_t bytes_copied = 0;
  uint64_t objects_present = 0;        // already in the destination at the right size
  uint64_t shards_without_object = 0;  // source shard rows whose object is missing: not copied
  uint64_t buckets = 0;
  uint64_t entries_written = 0;
  uint64_t entries_removed = 0;
  uint64_t extra_buckets = 0;  // in the destination only (deleted if delete_extra_buckets)
  uint64_t tokens = 0;
};

struct MigrateOptions {
  size_t page = 256;         // xorb and shard rows per page (one import transaction)
  size_t file_page = 64;     // file rows per page
  size_t entry_page = 1000;  // bucket entries listed per request, and changes per import
  size_t copy_threads = 4;   // objects copied at once
  bool delete_extra_buckets = false;
  // Called after each page's import with the checkpoint reached, for the caller to persist
  // (its error ends the run); may be empty.
  std::function<Status(const MigrateCheckpoint&)> save_checkpoint;
  // Called now and then with the report so far and the current step's name ("xorbs",
  // "files", "shards", "buckets", "tokens"); may be empty.
  std::function<void(const char* step, const MigrateReport&)> progress;
};

class DeploymentMigrator {
 public:
  // The four stores must outlive the migrator. `from_*` are only read.
  DeploymentMigrator(Index& from_index, ObjectStore& from_objects, Index& to_index,
                     ObjectStore& to_objects, MigrateOptions options)
      : from_index_(from_index),
        from_objects_(from_objects),
        to_index_(to_index),
        to_objects_(to_objects),
        options_(std::move(options)) {}

  // Runs steps 1-5 from `checkpoint` (updated as pages are imported). A source object that
  // is missing or not the size its row says fails the run (NotFound / Corruption, naming
  // it: run `xetstore fsck` on the source); what was copied before stays copied.
  Result<MigrateReport> Run(MigrateCheckpoint& checkpoint);

 private:
  // An object to copy: its key and, when its row gives it, its size.
  struct ObjectToCopy {
    std::string key;
    std::optional<uint64_t> size;
    bool missing = false;  // set by CopyObjects: absent from the source
  };
  // Copies the objects of `objects` the destination lacks (or holds at another size), on
  // copy_threads threads. A source object of another size than its row's is Corruption; a
  // missing one is NotFound, unless `missing_ok` (then only marked).
  Status CopyObjects(std::vector<ObjectToCopy>& objects, bool missing_ok, MigrateReport& report);
  Status CopyXorbs(MigrateCheckpoint& checkpoint, MigrateReport& report);
  Status CopyFiles(MigrateCheckpoint& checkpoint, MigrateReport& report);
  Status CopyShards(MigrateReport& report);
  // Buckets may name files stored after the file pass: those (and their xorbs) are copied
  // on the way, from `checkpoint`.
  Status CopyBuckets(MigrateCheckpoint& checkpoint, MigrateReport& report);
  Status CopyBucket(const BucketRecord& bucket, MigrateCheckpoint& checkpoint,
                    MigrateReport& report);
  Status RemoveExtraBuckets(MigrateReport& report);
  Status CopyTokens(MigrateReport& report);
  void Progress(const char* step, const MigrateReport& report) const;

  Index& from_index_;
  ObjectStore& from_objects_;
  Index& to_index_;
  ObjectStore& to_objects_;
  const MigrateOptions options_;
};

}  // namespace xet
