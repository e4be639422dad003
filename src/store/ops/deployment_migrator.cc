#include "store/ops/deployment_migrator.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "common/first_error.h"
#include "common/mutex.h"
#include "common/worker_group.h"
#include "store/bucket_keys.h"

namespace xet {
namespace {

// Bucket listings are walked in pages this size (the listing caps them anyway).
constexpr size_t kBucketPage = 100;

// The key an entry is stored at: a file's path, a directory entry's path + "/". Listings are
// ordered by it (bytewise, as std::string compares).
std::string EntryKey(const BucketTreeItem& item) {
  return item.is_directory ? MarkerKey(item.path) : item.path;
}

// One recursive listing of a bucket, item by item. An absent bucket lists nothing.
class EntryWalk {
 public:
  EntryWalk(Index& index, const BucketRecord& bucket, bool exists, size_t page)
      : index_(index), bucket_(bucket), done_(!exists), page_(page) {}

  // The current item, or nullptr at the end.
  Result<const BucketTreeItem*> Current() {
    while (pos_ == items_.size()) {
      if (done_) return nullptr;
      XET_ASSIGN_OR_RETURN(
          BucketTreePage p,
          index_.ListBucketTree(bucket_.ns, bucket_.name, "", /*recursive=*/true, cursor_, page_));
      items_ = std::move(p.items);
      pos_ = 0;
      done_ = !p.next_cursor.has_value();
      if (p.next_cursor) cursor_ = std::move(*p.next_cursor);
    }
    return &items_[pos_];
  }
  void Advance() { ++pos_; }

 private:
  Index& index_;
  const BucketRecord& bucket_;
  bool done_;
  const size_t page_;
  std::string cursor_;
  std::vector<BucketTreeItem> items_;
  size_t pos_ = 0;
};

}  // namespace

void DeploymentMigrator::Progress(const char* step, const MigrateReport& report) const {
  if (options_.progress) options_.progress(step, report);
}

Status DeploymentMigrator::CopyObjects(std::vector<ObjectToCopy>& objects, bool missing_ok,
                                       MigrateReport& report) {
  std::atomic<size_t> next{0};
  FirstError error;
  Mutex mu;
  uint64_t copied = 0, bytes = 0, present = 0;
  auto copy_one = [&](ObjectToCopy& o) -> Status {
    std::optional<uint64_t> want = o.size;
    if (!want) {
      Result<uint64_t> size = from_objects_.Size(o.key);
      if (!size.ok()) {
        if (size.status().code() == Status::Code::kNotFound && missing_ok) {
          o.missing = true;
          return Status::Ok();
        }
        return size.status().WithContext("source object " + o.key);
      }
      want = *size;
    }
    Result<uint64_t> have = to_objects_.Size(o.key);
    if (have.ok() && *have == *want) {
      MutexLock lock(mu);
      present++;
      return Status::Ok();
    }
    if (!have.ok() && have.status().code() != Status::Code::kNotFound) {
      return have.status().WithContext("destination object " + o.key);
    }
    if (have.ok()) {
      // Another size under a content-addressed key: a torn copy; replace it.
      XET_RETURN_IF_ERROR(to_objects_.Delete(o.key));
    }
    Result<std::vector<uint8_t>> data = from_objects_.Get(o.key);
    if (!data.ok()) {
      if (data.status().code() == Status::Code::kNotFound && missing_ok) {
        o.missing = true;
        return Status::Ok();
      }
      return data.status().WithContext("source object " + o.key +
                                       " (run `xetstore fsck` on the source)");
    }
    if (data->size() != *want) {
      return Status::Corruption("source object " + o.key + " holds " +
                                std::to_string(data->size()) + " bytes, its index row says " +
                                std::to_string(*want) + " (run `xetstore fsck` on the source)");
    }
    XET_RETURN_IF_ERROR(to_objects_.Put(o.key, *data).status().WithContext("copy " + o.key));
    MutexLock lock(mu);
    copied++;
    bytes += data->size();
    return Status::Ok();
  };
  {
    const size_t threads = std::max<size_t>(1, std::min(options_.copy_threads, objects.size()));
    WorkerGroup workers(threads, [&] {
      while (!error.failed()) {
        const size_t i = next.fetch_add(1);
        if (i >= objects.size()) return;
        error.Set(copy_one(objects[i]));
      }
    });
  }
  report.objects_copied += copied;
  report.bytes_copied += bytes;
  report.objects_present += present;
  return error.status();
}

Status DeploymentMigrator::CopyXorbs(MigrateCheckpoint& checkpoint, MigrateReport& report) {
  while (true) {
    XET_ASSIGN_OR_RETURN(std::vector<Index::ExportedXorb> page,
                         from_index_.ExportXorbs(checkpoint.xorbs_after, options_.page));
    if (page.empty()) return Status::Ok();
    std::vector<ObjectToCopy> objects;
    for (const Index::ExportedXorb& x : page) {
      objects.push_back({XorbKey(x.record.hash), x.record.object_size});
    }
    XET_RETURN_IF_ERROR(CopyObjects(objects, /*missing_ok=*/false, report));
    XET_RETURN_IF_ERROR(to_index_.ImportXorbs(page));
    report.xorbs += page.size();
    checkpoint.xorbs_after = page.back().row_id;
    if (options_.save_checkpoint) XET_RETURN_IF_ERROR(options_.save_checkpoint(checkpoint));
    Progress("xorbs", report);
  }
}

Status DeploymentMigrator::CopyFiles(MigrateCheckpoint& checkpoint, MigrateReport& report) {
  while (true) {
    XET_ASSIGN_OR_RETURN(std::vector<Index::ExportedFile> page,
                         from_index_.ExportFiles(checkpoint.files_after, options_.file_page));
    if (page.empty()) return Status::Ok();
    Status st = to_index_.ImportFiles(page);
    if (st.code() == Status::Code::kInvalidArgument) {
      // A file registered after the xorb pass named a xorb stored after it: copy those too.
      XET_RETURN_IF_ERROR(CopyXorbs(checkpoint, report));
      st = to_index_.ImportFiles(page);
      if (st.code() == Status::Code::kInvalidArgument) {
        // Still missing: the source's own file record names a xorb it does not hold.
        st = st.WithContext(
            "a source file record names a xorb the source does not hold (run "
            "`xetstore fsck` on the source)");
      }
    }
    XET_RETURN_IF_ERROR(st);
    report.files += page.size();
    checkpoint.files_after = page.back().row_id;
    if (options_.save_checkpoint) XET_RETURN_IF_ERROR(options_.save_checkpoint(checkpoint));
    Progress("files", report);
  }
}

Status DeploymentMigrator::CopyShards(MigrateReport& report) {
  // The destination's shard rows are walked alongside (both in hash order): a shard whose
  // row is there (with at least the source's stamp) had its object copied before it, so it
  // costs no object lookup and no import.
  Hash after, target_after;
  std::vector<Index::ExportedShard> target;
  size_t target_pos = 0;
  bool target_done = false;
  // Whether the destination holds `s`'s row with at least its stamp.
  auto in_target = [&](const Index::ExportedShard& s) -> Result<bool> {
    while (true) {
      while (target_pos < target.size() && target[target_pos].hash < s.hash) ++target_pos;
      if (target_pos < target.size()) {
        const Index::ExportedShard& t = target[target_pos];
        return t.hash == s.hash && t.seen_at_ms >= s.seen_at_ms;
      }
      if (target_done) return false;
      XET_ASSIGN_OR_RETURN(target, to_index_.ExportShards(target_after, options_.page));
      target_pos = 0;
      if (target.size() < options_.page) target_done = true;
      if (!target.empty()) target_after = target.back().hash;
    }
  };
  while (true) {
    XET_ASSIGN_OR_RETURN(std::vector<Index::ExportedShard> page,
                         from_index_.ExportShards(after, options_.page));
    if (page.empty()) return Status::Ok();
    after = page.back().hash;
    std::vector<Index::ExportedShard> rows;
    std::vector<ObjectToCopy> objects;
    for (Index::ExportedShard& s : page) {
      XET_ASSIGN_OR_RETURN(const bool there, in_target(s));
      if (there) {
        report.shards++;
        continue;
      }
      objects.push_back({ShardKey(s.hash), std::nullopt});
      rows.push_back(std::move(s));
    }
    XET_RETURN_IF_ERROR(CopyObjects(objects, /*missing_ok=*/true, report));
    std::vector<Index::ExportedShard> copied;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (objects[i].missing) {
        report.shards_without_object++;
      } else {
        copied.push_back(std::move(rows[i]));
      }
    }
    XET_RETURN_IF_ERROR(to_index_.ImportShards(copied));
    report.shards += copied.size();
    Progress("shards", report);
  }
}

Status DeploymentMigrator::CopyBucket(const BucketRecord& bucket, MigrateCheckpoint& checkpoint,
                                      MigrateReport& report) {
  XET_ASSIGN_OR_RETURN(std::optional<BucketRecord> existing,
                       to_index_.GetBucket(bucket.ns, bucket.name));
  EntryWalk source(from_index_, bucket, /*exists=*/true, options_.entry_page);
  EntryWalk target(to_index_, bucket, existing.has_value(), options_.entry_page);
  std::vector<BucketEntry> put, remove;
  auto flush = [&]() -> Status {
    Status st = to_index_.ImportBucketEntries(bucket, put, remove);
    if (st.code() == Status::Code::kInvalidArgument) {
      // An entry names a file registered after the file pass: copy the rows stored since.
      XET_RETURN_IF_ERROR(CopyXorbs(checkpoint, report));
      XET_RETURN_IF_ERROR(CopyFiles(checkpoint, report));
      st = to_index_.ImportBucketEntries(bucket, put, remove);
    }
    XET_RETURN_IF_ERROR(st);
    report.entries_written += put.size();
    report.entries_removed += remove.size();
    put.clear();
    remove.clear();
    return Status::Ok();
  };
  while (true) {
    XET_ASSIGN_OR_RETURN(const BucketTreeItem* s, source.Current());
    XET_ASSIGN_OR_RETURN(const BucketTreeItem* t, target.Current());
    if (s == nullptr && t == nullptr) break;
    const int order = s == nullptr ? 1 : t == nullptr ? -1 : EntryKey(*s).compare(EntryKey(*t));
    if (order < 0) {
      put.push_back(s->entry);
      source.Advance();
    } else if (order > 0) {
      BucketEntry gone;
      gone.path = t->path;
      gone.is_directory = t->is_directory;
      remove.push_back(std::move(gone));
      target.Advance();
    } else {
      if (!(s->entry == t->entry)) put.push_back(s->entry);
      source.Advance();
      target.Advance();
    }
    if (put.size() + remove.size() >= options_.entry_page) XET_RETURN_IF_ERROR(flush());
  }
  // At least once: creates the bucket and sets its metadata even when no entry changed.
  return flush();
}

Status DeploymentMigrator::CopyBuckets(MigrateCheckpoint& checkpoint, MigrateReport& report) {
  std::string after;
  while (true) {
    XET_ASSIGN_OR_RETURN(std::vector<BucketRecord> page,
                         from_index_.ListBuckets("", "", after, kBucketPage));
    for (const BucketRecord& b : page) {
      XET_RETURN_IF_ERROR(CopyBucket(b, checkpoint, report).WithContext("bucket " + b.FullName()));
      report.buckets++;
      Progress("buckets", report);
    }
    if (page.size() < kBucketPage) return Status::Ok();
    after = page.back().FullName();
  }
}

Status DeploymentMigrator::RemoveExtraBuckets(MigrateReport& report) {
  std::string after;
  while (true) {
    XET_ASSIGN_OR_RETURN(std::vector<BucketRecord> page,
                         to_index_.ListBuckets("", "", after, kBucketPage));
    for (const BucketRecord& b : page) {
      XET_ASSIGN_OR_RETURN(std::optional<BucketRecord> in_source,
                           from_index_.GetBucket(b.ns, b.name));
      if (in_source) continue;
      report.extra_buckets++;
      if (options_.delete_extra_buckets) {
        XET_RETURN_IF_ERROR(to_index_.DeleteBucket(b.ns, b.name));
      }
    }
    if (page.size() < kBucketPage) return Status::Ok();
    after = page.back().FullName();
  }
}

Status DeploymentMigrator::CopyTokens(MigrateReport& report) {
  XET_ASSIGN_OR_RETURN(std::vector<TokenRecord> tokens, from_index_.ListTokens());
  for (const TokenRecord& t : tokens) {
    XET_RETURN_IF_ERROR(to_index_.PutToken(t).WithContext("token " + t.id));
    report.tokens++;
  }
  Progress("tokens", report);
  return Status::Ok();
}

Result<MigrateReport> DeploymentMigrator::Run(MigrateCheckpoint& checkpoint) {
  MigrateReport report;
  XET_RETURN_IF_ERROR(CopyXorbs(checkpoint, report));
  XET_RETURN_IF_ERROR(CopyFiles(checkpoint, report));
  XET_RETURN_IF_ERROR(CopyShards(report));
  XET_RETURN_IF_ERROR(CopyBuckets(checkpoint, report));
  XET_RETURN_IF_ERROR(RemoveExtraBuckets(report));
  XET_RETURN_IF_ERROR(CopyTokens(report));
  return report;
}

}  // namespace xet
