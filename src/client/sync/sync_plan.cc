#include "client/sync/sync_plan.h"

#include <algorithm>
#include <utility>

namespace xet {
namespace {

// Sorts by path and rejects a path listed twice.
Status SortListing(std::vector<SyncFile>& files, std::string_view side) {
  std::sort(files.begin(), files.end(),
            [](const SyncFile& a, const SyncFile& b) { return a.path < b.path; });
  const auto dup =
      std::adjacent_find(files.begin(), files.end(),
                         [](const SyncFile& a, const SyncFile& b) { return a.path == b.path; });
  if (dup != files.end()) {
    return Status::InvalidArgument(std::string(side) + " listing names '" + dup->path + "' twice");
  }
  return Status::Ok();
}

Result<Hash> HashOf(const SyncFile& file, const SyncHasher& hasher) {
  if (file.xet_hash) return *file.xet_hash;
  if (!hasher) {
    return Status::InvalidArgument("checksum mode: no Xet hash for '" + file.path + "'");
  }
  return hasher(file);
}

// Why `src` must be transferred over `dst` (both present), or nullopt when they are equal.
Result<std::optional<SyncReason>> Compare(const SyncFile& src, const SyncFile& dst,
                                          const SyncOptions& options, const SyncHasher& hasher,
                                          std::optional<Hash>* src_hash) {
  if (src.size != dst.size) return std::optional<SyncReason>(SyncReason::kSizeChanged);
  if (!options.checksum) {
    if (src.mtime_ms == 0 || src.mtime_ms != dst.mtime_ms) {
      return std::optional<SyncReason>(SyncReason::kMtimeChanged);
    }
    return std::optional<SyncReason>();
  }
  XET_ASSIGN_OR_RETURN(const Hash s, HashOf(src, hasher));
  XET_ASSIGN_OR_RETURN(const Hash d, HashOf(dst, hasher));
  *src_hash = s;
  if (s != d) return std::optional<SyncReason>(SyncReason::kContentChanged);
  return std::optional<SyncReason>();
}

SyncOp TransferOp(const SyncOptions& options, const SyncFile& src, SyncReason reason) {
  SyncOp op;
  op.kind =
      options.direction == SyncDirection::kUpload ? SyncOpKind::kUpload : SyncOpKind::kDownload;
  op.path = src.path;
  op.size = src.size;
  op.mtime_ms = src.mtime_ms;
  op.xet_hash = src.xet_hash;
  op.reason = reason;
  return op;
}

SyncOp DeleteOp(const SyncFile& dst) {
  SyncOp op;
  op.kind = SyncOpKind::kDelete;
  op.path = dst.path;
  op.size = dst.size;
  op.reason = SyncReason::kNotInSource;
  return op;
}

}  // namespace

Result<SyncPlan> PlanSync(std::vector<SyncFile> source, std::vector<SyncFile> destination,
                          const SyncOptions& options, const SyncHasher& hasher,
                          SyncPlanCounts* counts) {
  XET_RETURN_IF_ERROR(SortListing(source, "source"));
  XET_RETURN_IF_ERROR(SortListing(destination, "destination"));

  SyncPlanCounts local_counts;
  SyncPlanCounts& n = counts != nullptr ? *counts : local_counts;
  n = {};
  SyncPlan plan;
  plan.direction = options.direction;
  std::vector<SyncOp> deletes;

  size_t i = 0;
  size_t j = 0;
  while (i < source.size() || j < destination.size()) {
    const bool take_src =
        j == destination.size() || (i < source.size() && source[i].path <= destination[j].path);
    const bool take_dst =
        i == source.size() || (j < destination.size() && destination[j].path <= source[i].path);
    const SyncFile* src = take_src ? &source[i++] : nullptr;
    const SyncFile* dst = take_dst ? &destination[j++] : nullptr;
    const std::string& path = src != nullptr ? src->path : dst->path;
    if (!options.filter.Includes(path)) {
      ++n.excluded;
      continue;
    }
    if (dst == nullptr) {
      plan.ops.push_back(TransferOp(options, *src, SyncReason::kNew));
    } else if (src == nullptr) {
      if (options.delete_extraneous) {
        deletes.push_back(DeleteOp(*dst));
      } else {
        ++n.kept;
      }
    } else {
      std::optional<Hash> src_hash;
      XET_ASSIGN_OR_RETURN(const std::optional<SyncReason> reason,
                           Compare(*src, *dst, options, hasher, &src_hash));
      if (!reason) {
        ++n.unchanged;
        continue;
      }
      SyncOp op = TransferOp(options, *src, *reason);
      if (!op.xet_hash) op.xet_hash = src_hash;
      plan.ops.push_back(std::move(op));
    }
  }
  plan.ops.insert(plan.ops.end(), std::make_move_iterator(deletes.begin()),
                  std::make_move_iterator(deletes.end()));
  return plan;
}

std::string_view SyncOpKindName(SyncOpKind kind) {
  switch (kind) {
    case SyncOpKind::kUpload:
      return "upload";
    case SyncOpKind::kDownload:
      return "download";
    case SyncOpKind::kDelete:
      return "delete";
  }
  return "?";
}

std::string_view SyncReasonName(SyncReason reason) {
  switch (reason) {
    case SyncReason::kNew:
      return "new";
    case SyncReason::kSizeChanged:
      return "size-changed";
    case SyncReason::kMtimeChanged:
      return "mtime-changed";
    case SyncReason::kContentChanged:
      return "content-changed";
    case SyncReason::kNotInSource:
      return "not-in-source";
  }
  return "?";
}

std::string_view SyncDirectionName(SyncDirection direction) {
  return direction == SyncDirection::kUpload ? "upload" : "download";
}

}  // namespace xet
