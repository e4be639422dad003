#include "store/ops/consistency_check.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "format/sha256.h"
#include "format/shard_parser.h"
#include "format/xorb.h"
#include "store/index_support.h"

namespace xet {
namespace {

constexpr std::string_view kQuarantinePrefix = "quarantine/";
constexpr size_t kMaxPendingListed = 1'000'000;

// The hash an object key ends in ("xorbs/ab/<hex>", "shards/<hex>"), if it does.
std::optional<Hash> HashOfKey(std::string_view key) {
  const size_t slash = key.rfind('/');
  return Hash::FromHex(slash == std::string_view::npos ? key : key.substr(slash + 1));
}

// The chunk table of a stored xorb (chunks then footer) whose chunks hash to `hash`.
Result<VerifiedXorb> VerifyStoredXorb(std::span<const uint8_t> bytes, const Hash& hash) {
  return ParseAndVerifyXorb(bytes, hash, XorbTrailingBytes::kAllow);
}

Status VerifyStoredShard(std::span<const uint8_t> bytes, const Hash& hash) {
  if (Hash::FromArray(Sha256Of(bytes)) != hash) {
    return Status::Corruption("its SHA-256 does not match its key");
  }
  return ParseShard(bytes).status();
}

FsckProblem Problem(std::string kind, std::string key, std::string detail) {
  FsckProblem p;
  p.kind = std::move(kind);
  p.key = std::move(key);
  p.detail = std::move(detail);
  return p;
}

}  // namespace

size_t FsckReport::Remaining() const {
  return static_cast<size_t>(std::count_if(problems.begin(), problems.end(),
                                           [](const FsckProblem& p) { return !p.repaired; }));
}

Result<FsckReport> ConsistencyCheck::Run() {
  FsckReport report;
  XET_ASSIGN_OR_RETURN(std::vector<std::string> pending,
                       index_.PendingDeletions(kMaxPendingListed, INT64_MAX));
  pending_.insert(pending.begin(), pending.end());
  report.pending_deletions = pending_.size();
  XET_RETURN_IF_ERROR(CheckXorbRows(report));
  XET_RETURN_IF_ERROR(CheckShardRows(report));
  XET_RETURN_IF_ERROR(CheckFiles(report));
  XET_RETURN_IF_ERROR(CheckObjects("xorbs/", report));
  XET_RETURN_IF_ERROR(CheckObjects("shards/", report));
  XET_RETURN_IF_ERROR(RecheckUnindexed(report));
  if (options_.repair) {
    // Objects first: a file naming a missing xorb is whole again once the xorb's object was
    // registered again.
    for (FsckProblem& p : report.problems) {
      if (p.kind != "file-missing-xorb") XET_RETURN_IF_ERROR(Repair(p));
    }
    for (FsckProblem& p : report.problems) {
      if (p.kind == "file-missing-xorb") XET_RETURN_IF_ERROR(Repair(p));
    }
  }
  return report;
}

Status ConsistencyCheck::CheckXorbRows(FsckReport& report) {
  return index_.ForEachXorbRow([&](const Index::GcXorbRow& x) -> Status {
    ++report.xorbs_checked;
    xorbs_.insert(x.hash);
    const std::string key = XorbKey(x.hash);
    auto size = objects_.Size(key);
    if (!size.ok()) {
      if (size.status().code() != Status::Code::kNotFound) return size.status();
      report.problems.push_back(Problem("xorb-object-missing", key,
                                        "the index records it, the object "
                                        "store has no object"));
      return Status::Ok();
    }
    if (*size != x.object_size) {
      report.problems.push_back(Problem("xorb-size-mismatch", key,
                                        "object of " + std::to_string(*size) +
                                            " bytes, the index "
                                            "records " +
                                            std::to_string(x.object_size)));
      return Status::Ok();
    }
    if (!options_.deep) return Status::Ok();
    XET_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, objects_.Get(key));
    auto verified = VerifyStoredXorb(bytes, x.hash);
    if (!verified.ok()) {
      report.problems.push_back(Problem("xorb-corrupt", key, verified.status().message()));
    }
    return Status::Ok();
  });
}

Status ConsistencyCheck::CheckShardRows(FsckReport& report) {
  return index_.ForEachShardRow([&](const Index::GcShardRow& s) -> Status {
    ++report.shards_checked;
    shards_.insert(s.hash);
    const std::string key = ShardKey(s.hash);
    std::optional<std::vector<uint8_t>> bytes;  // read only by a deep check
    Status found;
    if (options_.deep) {
      auto got = objects_.Get(key);
      found = got.status();
      if (got.ok()) bytes = std::move(*got);
    } else {
      found = objects_.Size(key).status();
    }
    if (found.code() == Status::Code::kNotFound) {
      report.problems.push_back(Problem("shard-object-missing", key,
                                        "the index records it, the "
                                        "object store has no object"));
      return Status::Ok();
    }
    XET_RETURN_IF_ERROR(found);
    if (!bytes) return Status::Ok();
    Status st = VerifyStoredShard(*bytes, s.hash);
    if (!st.ok()) report.problems.push_back(Problem("shard-corrupt", key, st.message()));
    return Status::Ok();
  });
}

Status ConsistencyCheck::CheckFiles(FsckReport& report) {
  return index_.ForEachFileRow(/*with_terms=*/true, [&](const Index::GcFileRow& f) -> Status {
    ++report.files_checked;
    std::optional<Hash> missing;
    for (const FileTerm& t : f.terms) {
      referenced_.insert(t.xorb_hash);
      if (!missing && !xorbs_.contains(t.xorb_hash)) {
        // Registered after the xorb listing? Then it is there now.
        XET_ASSIGN_OR_RETURN(bool stored, index_.HasXorb(t.xorb_hash));
        if (!stored) missing = t.xorb_hash;
      }
    }
    if (missing) {
      report.problems.push_back(
          Problem("file-missing-xorb", "files/" + f.hash.ToHex(),
                  "its terms name xorb " + missing->ToHex() + ", which is not in the index"));
      report.problems.back().missing_xorb = *missing;
    }
    return Status::Ok();
  });
}

Status ConsistencyCheck::CheckObjects(const std::string& prefix, FsckReport& report) {
  const bool xorbs = prefix == "xorbs/";
  return objects_.List(prefix, [&](std::string_view key, uint64_t /*size*/) -> Status {
    ++report.objects_listed;
    const std::string k(key);
    if (pending_.contains(k)) return Status::Ok();
    const std::optional<Hash> hash = HashOfKey(key);
    if (!hash || k != (xorbs ? XorbKey(*hash) : ShardKey(*hash))) {
      report.problems.push_back(Problem(xorbs ? "xorb-unindexed" : "shard-unindexed", k,
                                        "an object under a key no hash maps to"));
      return Status::Ok();
    }
    if (xorbs ? xorbs_.contains(*hash) : shards_.contains(*hash)) return Status::Ok();
    if (xorbs) {
      XET_ASSIGN_OR_RETURN(bool stored, index_.HasXorb(*hash));  // registered meanwhile?
      if (stored) return Status::Ok();
    }
    report.problems.push_back(Problem(xorbs ? "xorb-unindexed" : "shard-unindexed", k,
                                      "an object the index does not record"));
    return Status::Ok();
  });
}

Status ConsistencyCheck::RecheckUnindexed(FsckReport& report) {
  auto unindexed = [](const FsckProblem& p) {
    return (p.kind == "xorb-unindexed" || p.kind == "shard-unindexed") && HashOfKey(p.key) &&
           p.key == (p.kind == "xorb-unindexed" ? XorbKey(*HashOfKey(p.key))
                                                : ShardKey(*HashOfKey(p.key)));
  };
  std::unordered_set<Hash> shard_candidates;
  bool any = false;
  for (const FsckProblem& p : report.problems) {
    if (!unindexed(p)) continue;
    any = true;
    if (p.kind == "shard-unindexed") shard_candidates.insert(*HashOfKey(p.key));
  }
  if (!any) return Status::Ok();
  std::this_thread::sleep_for(options_.settle);
  std::unordered_set<Hash> shards_now;
  if (!shard_candidates.empty()) {
    XET_RETURN_IF_ERROR(index_.ForEachShardRow([&](const Index::GcShardRow& s) -> Status {
      if (shard_candidates.contains(s.hash)) shards_now.insert(s.hash);
      return Status::Ok();
    }));
  }
  std::vector<FsckProblem> kept;
  for (FsckProblem& p : report.problems) {
    if (unindexed(p)) {
      const Hash hash = *HashOfKey(p.key);
      bool indexed = false;
      if (p.kind == "xorb-unindexed") {
        XET_ASSIGN_OR_RETURN(indexed, index_.HasXorb(hash));
      } else {
        indexed = shards_now.contains(hash);
      }
      auto size = objects_.Size(p.key);
      const bool gone = !size.ok() && size.status().code() == Status::Code::kNotFound;
      if (!size.ok() && !gone) return size.status();
      if (indexed || gone) continue;
    }
    kept.push_back(std::move(p));
  }
  report.problems = std::move(kept);
  return Status::Ok();
}

Status ConsistencyCheck::Quarantine(const std::string& key) {
  XET_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, objects_.Get(key));
  XET_RETURN_IF_ERROR(objects_.Put(std::string(kQuarantinePrefix) + key, bytes).status());
  return objects_.Delete(key);
}

Status ConsistencyCheck::DropRow(const FsckProblem& p) {
  const std::optional<Hash> hash = HashOfKey(p.key);
  if (!hash) return Status::Internal("fsck: no hash in " + p.key);
  // Cutoff "the end of time": the row goes whatever its stamp; the key it leaves pending is
  // forgotten at once (there is no object to delete).
  const std::vector<Hash> one = {*hash};
  if (p.kind.starts_with("xorb")) {
    XET_RETURN_IF_ERROR(index_.RetireXorbs(one, INT64_MAX, false).status());
  } else {
    XET_RETURN_IF_ERROR(index_.RetireShards(one, INT64_MAX, false).status());
  }
  const std::vector<std::string> keys = {p.key};
  return index_.ForgetPendingDeletions(keys);
}

Status ConsistencyCheck::Reregister(FsckProblem& p) {
  const std::optional<Hash> hash = HashOfKey(p.key);
  if (!hash || p.key != XorbKey(*hash)) {
    p.action = "left in place: not a xorb key";
    return Status::Ok();
  }
  XET_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, objects_.Get(p.key));
  auto verified = VerifyStoredXorb(bytes, *hash);
  if (!verified.ok() || verified->table.empty()) {
    XET_RETURN_IF_ERROR(Quarantine(p.key));
    p.repaired = true;
    p.action = "quarantined (does not verify: " +
               (verified.ok() ? std::string("no chunks") : verified.status().message()) + ")";
    return Status::Ok();
  }
  XET_RETURN_IF_ERROR(
      index_.PutXorb(XorbRecordOf(*hash, verified->table, bytes.size()), kRecoveredScope).status());
  p.repaired = true;
  p.action = std::string("registered again (visible to scope ") + kRecoveredScope + ")";
  return Status::Ok();
}

Status ConsistencyCheck::ReregisterShard(FsckProblem& p) {
  const std::optional<Hash> hash = HashOfKey(p.key);
  if (!hash || p.key != ShardKey(*hash)) {
    p.action = "left in place: not a shard key";
    return Status::Ok();
  }
  // Its bytes were validated against the xorbs when it was uploaded; that they are still
  // those bytes is what its key (their SHA-256) says.
  XET_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, objects_.Get(p.key));
  auto shard = ParseShard(bytes);
  if (Hash::FromArray(Sha256Of(bytes)) != *hash || !shard.ok()) {
    XET_RETURN_IF_ERROR(Quarantine(p.key));
    p.repaired = true;
    p.action = "quarantined (its bytes do not hash to its key or do not parse)";
    return Status::Ok();
  }
  ShardCommit commit;
  commit.shard_hash = *hash;
  commit.scope = kRecoveredScope;
  for (const FileInfo& f : shard->files) {
    FileRecord rec;
    rec.file_hash = f.file_hash;
    for (const FileDataSequenceEntry& t : f.terms) {
      rec.terms.push_back(
          {t.cas_hash, t.chunk_index_start, t.chunk_index_end, t.unpacked_segment_bytes});
      rec.size += t.unpacked_segment_bytes;
    }
    if (f.metadata_ext) rec.sha256 = f.metadata_ext->sha256;
    commit.files.push_back(std::move(rec));
  }
  for (const CasInfo& cas : shard->cas_infos) commit.xorbs.push_back(cas.cas_hash);
  Result<ShardCommitResult> r = index_.CommitShard(commit);
  if (r.status().code() == Status::Code::kInvalidArgument) {
    p.action = "not repairable: " + r.status().message() + " (its xorb is gone)";
    return Status::Ok();
  }
  XET_RETURN_IF_ERROR(r.status());
  p.repaired = true;
  p.action = "registered again with its " + std::to_string(commit.files.size()) +
             " files (visible to scope " + kRecoveredScope + ")";
  return Status::Ok();
}

Status ConsistencyCheck::Repair(FsckProblem& p) {
  if (p.kind == "xorb-corrupt" || p.kind == "shard-corrupt" || p.kind == "xorb-size-mismatch") {
    XET_RETURN_IF_ERROR(Quarantine(p.key));
    p.action = "quarantined to " + std::string(kQuarantinePrefix) + p.key;
    // Its row is now a row without object.
    p.kind = p.kind.starts_with("xorb") ? "xorb-object-missing" : "shard-object-missing";
  }
  if (p.kind == "shard-object-missing" ||
      (p.kind == "xorb-object-missing" && !referenced_.contains(*HashOfKey(p.key)))) {
    XET_RETURN_IF_ERROR(DropRow(p));
    p.repaired = true;
    p.action += (p.action.empty() ? "" : "; ") + std::string("index row dropped");
    return Status::Ok();
  }
  if (p.kind == "xorb-object-missing") {
    p.action += (p.action.empty() ? "" : "; ") +
                std::string("not repairable: file records need this xorb (data lost)");
    return Status::Ok();
  }
  if (p.kind == "xorb-unindexed") return Reregister(p);
  if (p.kind == "shard-unindexed") return ReregisterShard(p);
  if (p.kind == "file-missing-xorb") {
    XET_ASSIGN_OR_RETURN(p.repaired, index_.HasXorb(p.missing_xorb));
    p.action = p.repaired ? "its xorb was registered again"
                          : "not repairable: the xorb is gone (upload the file again)";
  }
  return Status::Ok();
}

}  // namespace xet
