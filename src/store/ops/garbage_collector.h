// GarbageCollector: frees the xorbs, shards and file records no bucket entry can reach
// (`xetstore gc`), safely while uploads run on any number of nodes sharing the index and the
// object store. The design and its reasoning are in docs/SERVER.md ("Garbage collection");
// the index operations it relies on are index.h's "operator tools" section.
//
// One run, with cutoff = the index clock at the start - grace:
//  0. Finishes the deletions an interrupted run left pending (their rows are already gone;
//     only those over 10 minutes old, which no live run can still be working on).
//  1. Files: every file record stamped before the cutoff that no bucket entry points at loses
//     its record and visibility (Index::CollectFiles, atomic with bucket batches).
//  2. Mark: the xorbs the remaining file records reference (a hash set: bounded by the
//     number of live xorbs, not by files or terms; file rows are read a page at a time).
//  3. Xorbs: every xorb outside that set stamped before the cutoff is retired
//     (Index::RetireXorbs re-checks the stamp in the transaction that removes its rows), then
//     its object is deleted and the pending deletion forgotten.
//  4. Shards: every shard stamped before the cutoff none of whose files is still recorded
//     is retired the same way (one whose object is missing or does not parse is kept).
// An upload that registers a file after step 2 stamps every xorb the file references, so
// step 3 keeps them; one whose xorb was retired first is refused by CommitShard. Crash-safe:
// rows go before objects, and a retired object's key stays pending until it is deleted.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/result.h"
#include "store/index.h"
#include "store/object_store.h"

namespace xet {

struct GcOptions {
  int64_t grace_ms = 24LL * 3600 * 1000;  // what is younger than this survives
  bool dry_run = false;                   // report what would be freed, change nothing
  size_t batch = 512;                     // rows removed per index transaction
  // Test hook: runs after the mark (step 2), before any xorb is retired; its error ends the
  // run.
  std::function<Status()> after_mark;
};

struct GcReport {
  bool dry_run = false;
  int64_t cutoff_ms = 0;  // index clock: what was seen before this is old enough
  uint64_t files_scanned = 0;
  uint64_t files_freed = 0;
  uint64_t xorbs_scanned = 0;
  uint64_t xorbs_reachable = 0;
  uint64_t xorbs_freed = 0;
  uint64_t xorb_bytes_freed = 0;
  uint64_t shards_scanned = 0;
  uint64_t shards_freed = 0;
  uint64_t shard_bytes_freed = 0;
  uint64_t shards_unreadable = 0;  // old shards whose object is missing or does not parse:
                                   // kept (see fsck)
  uint64_t pending_finished = 0;   // objects an interrupted earlier run left to delete
};

class GarbageCollector {
 public:
  GarbageCollector(Index& index, ObjectStore& objects, GcOptions options)
      : index_(index), objects_(objects), options_(std::move(options)) {}

  Result<GcReport> Run();

 private:
  Status FinishPendingDeletions(GcReport& report);
  Status CollectFiles(GcReport& report);
  Status MarkReachableXorbs(GcReport& report);
  Status RetireXorbs(GcReport& report);
  Status RetireShards(GcReport& report);
  // Deletes the objects of `keys` (pending deletions), then forgets them.
  Status DeleteObjects(const std::vector<std::string>& keys);
  // DeleteObjects of the keys (`key`: XorbKey or ShardKey) of what was retired; nothing in a
  // dry run.
  Status DeleteRetired(const std::vector<Hash>& retired, std::string (*key)(const Hash&));
  // Whether a shard stamped before the cutoff has no file left (dry run: counting the files
  // step 1 would have freed as gone). *size gets the object's size.
  Result<bool> ShardIsGarbage(const Hash& shard, uint64_t* size, GcReport& report);

  Index& index_;
  ObjectStore& objects_;
  GcOptions options_;
  int64_t now_ms_ = 0;  // index clock at the start
  int64_t cutoff_ms_ = 0;
  std::unordered_set<Hash> reachable_;
  std::unordered_set<Hash> dry_run_freed_files_;
};

}  // namespace xet
