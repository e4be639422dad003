// ConsistencyCheck: index <-> object store consistency (`xetstore fsck`).
//
// Checks, reading the index a page at a time (memory: one hash per xorb and per shard):
// - xorb and shard rows whose object is missing (or, for xorbs, whose object size differs
//   from the recorded one);
// - xorb and shard objects without a row (object keys pending deletion by gc are expected
//   and not counted);
// - file records whose terms name a xorb that is not in the index;
// - with `deep`: every stored xorb is parsed and its hash recomputed from its chunks, every
//   stored shard is parsed and its SHA-256 compared with its key.
// With `repair`:
// - a corrupt object is quarantined: copied to "quarantine/<its key>" and removed from its
//   key, after which its row counts as a row without object;
// - a row without object is dropped when nothing references it (a shard row always; a xorb
//   row when no file record names the xorb); one a file needs is reported as data loss;
// - a xorb object without a row is verified and registered again (visible to the scope
//   kRecoveredScope: its uploaders are not recorded anywhere else);
// - a shard object without a row is registered again (CommitShard with kRecoveredScope):
//   its row, its files' records (those the index lost come back) and its xorbs'
//   visibility; one whose bytes do not hash to its key or do not parse is quarantined, one
//   naming a xorb that is gone is reported;
// - a file naming a missing xorb counts as repaired once that xorb was registered again
//   (repairs of objects run first).
// Uploads running meanwhile make an object look unindexed for a moment (written, not yet
// registered): an object found unindexed is looked up again after `settle`, and reported
// only if it is still unindexed (and still there). --repair is best run on a quiet store.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/result.h"
#include "store/index.h"
#include "store/object_store.h"

namespace xet {

// The scope xorbs and shards re-registered by fsck --repair are visible to.
inline constexpr const char* kRecoveredScope = "xetstore-fsck/recovered";

struct FsckOptions {
  bool deep = false;
  bool repair = false;
  // How long an upload may take between storing an object and registering it.
  std::chrono::milliseconds settle{2000};
};

struct FsckProblem {
  // xorb-object-missing, xorb-size-mismatch, xorb-corrupt, xorb-unindexed,
  // shard-object-missing, shard-corrupt, shard-unindexed, file-missing-xorb
  std::string kind;
  std::string key;     // the object key, or "files/<hash>" for a file record
  std::string detail;  // one line
  bool repaired = false;
  std::string action;  // what --repair did, or why it could not
  Hash missing_xorb;   // file-missing-xorb: the first xorb its terms name that is missing
};

struct FsckReport {
  uint64_t xorbs_checked = 0;
  uint64_t shards_checked = 0;
  uint64_t files_checked = 0;
  uint64_t objects_listed = 0;
  uint64_t pending_deletions = 0;
  std::vector<FsckProblem> problems;

  // Problems --repair did not (or could not) fix.
  size_t Remaining() const;
};

class ConsistencyCheck {
 public:
  ConsistencyCheck(Index& index, ObjectStore& objects, FsckOptions options)
      : index_(index), objects_(objects), options_(options) {}

  Result<FsckReport> Run();

 private:
  Status CheckXorbRows(FsckReport& report);
  Status CheckShardRows(FsckReport& report);
  Status CheckFiles(FsckReport& report);
  Status CheckObjects(const std::string& prefix, FsckReport& report);
  // Drops the unindexed-object problems of objects registered (or deleted) since, after
  // waiting options_.settle when there are any.
  Status RecheckUnindexed(FsckReport& report);
  Status Repair(FsckProblem& problem);
  // Copies the object at `key` to quarantine/<key> and removes it from `key`.
  Status Quarantine(const std::string& key);
  Status DropRow(const FsckProblem& problem);
  Status Reregister(FsckProblem& problem);
  Status ReregisterShard(FsckProblem& problem);

  Index& index_;
  ObjectStore& objects_;
  FsckOptions options_;
  std::unordered_set<Hash> xorbs_;       // in the index
  std::unordered_set<Hash> shards_;      // in the index
  std::unordered_set<Hash> referenced_;  // named by a file record
  std::unordered_set<std::string> pending_;
};

}  // namespace xet
