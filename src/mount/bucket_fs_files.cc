// BucketFs: file content. Opening, reading and writing files, staging, and the commits
// that upload staged files and register them in one batch (mount/bucket_fs.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "client/upload/partial_edit.h"
#include "client/upload/uploader.h"
#include "common/byte_source.h"
#include "mount/bucket_fs.h"
#include "mount/bucket_fs_state.h"
#include "mount/mount_paths.h"
#include "mount/staged_content.h"

namespace xet {

namespace {

bool Writable(int flags) { return (flags & O_ACCMODE) != O_RDONLY; }

// Below this size a file is a chunk or two: chunk-level dedup against earlier uploads (the
// shard cache, global dedup queries) can save it nothing worth a request, and loading the
// shard cache for each group of many small files would cost more than their upload.
constexpr uint64_t kSmallFileBytes = 1 << 20;

// From this size on, a file written from empty by appends is uploaded while it is written
// (mount/streaming_upload.h), by at most kMaxStreams files at once (each holds an upload
// pipeline's buffers); smaller ones at their commit.
constexpr uint64_t kStreamMinBytes = 8 << 20;
constexpr int kMaxStreams = 2;

// From this size on, a partly rewritten file is uploaded as an edit of its committed version
// (its unchanged bytes are neither fetched nor sent); below it, whole.
constexpr uint64_t kPartialEditMinBytes = 8 << 20;

// Fills `out` from `offset` of a remote version.
Status ReadStreamFully(FileStream& stream, uint64_t offset, std::span<uint8_t> out) {
  size_t done = 0;
  while (done < out.size()) {
    XET_ASSIGN_OR_RETURN(size_t n, stream.Read(offset + done, out.subspan(done)));
    if (n == 0) return Status::Corruption("the remote file ended early");
    done += n;
  }
  return Status::Ok();
}

}  // namespace

std::shared_ptr<BucketFs::FileState> BucketFs::FindState(Ino ino) const {
  MutexLock lock(mu_);
  auto it = files_.find(ino);
  return it == files_.end() ? nullptr : it->second;
}

std::shared_ptr<BucketFs::Handle> BucketFs::HandleFor(uint64_t fh) const {
  MutexLock lock(mu_);
  auto it = handles_.find(fh);
  return it == handles_.end() ? nullptr : it->second;
}

std::optional<uint64_t> BucketFs::OpenSize(Ino ino) const {
  auto st = FindState(ino);
  if (!st || (!st->has_staged.load() && st->pins.load() == 0)) return std::nullopt;
  return st->size.load();
}

std::shared_ptr<BucketFs::FileState> BucketFs::PinState(Ino ino, const NodeAttr& attr) {
  MutexLock lock(mu_);
  auto& slot = files_[ino];
  if (!slot) slot = std::make_shared<FileState>(ino, attr.hash, attr.size);
  slot->pins += 1;
  return slot;
}

void BucketFs::Unpin(const std::shared_ptr<FileState>& st) {
  {
    MutexLock lock(mu_);
    if (--st->pins > 0) return;
  }
  // Idle: drop the staged copy once committed, and the state with it. A state that is
  // busy (its lock held, e.g. by a commit) is left for a later Unpin.
  {
    MutexLock st_lock(st->mu);
    if (st->dirty()) return;
    StopStream(*st);
    st->staged.reset();
    st->has_staged = false;
    st->base_stream.reset();
  }
  MutexLock lock(mu_);
  auto it = files_.find(st->ino);
  if (it == files_.end() || it->second != st || st->pins > 0) return;
  if (!st->mu.TryLock()) return;
  const bool dirty = st->dirty();
  st->mu.Unlock();
  if (!dirty) {
    files_.erase(it);
    detached_.erase(st->ino);
  }
}

int BucketFs::EnsureStaged(FileState& st) {
  st.mu.AssertHeld();
  if (st.staged) return 0;
  if (options_.read_only) return EROFS;
  auto staged = StagedFile::Create(staging_, st.base_size);
  if (!staged.ok()) return ToErrno(staged.status(), "staging");
  st.staged = std::move(*staged);
  st.size = st.staged->size();
  st.has_staged = true;
  return 0;
}

Status BucketFs::ReadBase(FileState& st, uint64_t offset, std::span<uint8_t> out) {
  st.mu.AssertHeld();
  if (!st.base_stream) st.base_stream = content_.Open(st.base_hash, st.base_size);
  return ReadStreamFully(*st.base_stream, offset, out);
}

void BucketFs::MarkWritten(Ino ino, uint64_t size) {
  auto path = inodes_.Path(ino);
  if (!path) return;
  const int64_t now = NowMs();
  meta_.Update(*path, [&](NodeAttr& a) {
    a.size = size;
    a.mtime_ms = a.ctime_ms = now;
    a.pending = true;
  });
}

bool BucketFs::BypassesPageCache(int flags, uint32_t mode) {
  return (flags & O_ACCMODE) == O_WRONLY && (mode & (S_ISUID | S_ISGID)) == 0;
}

bool BucketFs::HandleBypassesPageCache(uint64_t fh) const {
  std::shared_ptr<Handle> h = HandleFor(fh);
  return h != nullptr && h->direct;
}

int BucketFs::Open(Ino ino, int flags, uint64_t* fh, bool* keep_cache) {
  NodeAttr attr;
  if (int err = GetAttr(ino, &attr); err != 0) return err;
  if (attr.kind == NodeKind::kDirectory) return EISDIR;
  if (attr.kind == NodeKind::kSymlink) return ELOOP;
  if (IsSpecialKind(attr.kind)) return ENXIO;  // the kernel opens these itself, never here
  if (Writable(flags) && options_.read_only) return EROFS;
  auto st = PinState(ino, attr);
  int err = 0;
  bool truncated = false;
  {
    MutexLock lock(st->mu);
    // A clean file another client replaced since: read the new version.
    if (!st->staged && st->base_hash != attr.hash) {
      st->base_hash = attr.hash;
      st->base_size = attr.size;
      st->size = attr.size;
      st->base_stream.reset();
    }
    if (Writable(flags) && (flags & O_TRUNC) != 0 && st->size.load() != 0) {
      err = EnsureStaged(*st);
      if (err == 0) {
        StopStream(*st);
        Status s = st->staged->Truncate(0);
        if (s.ok()) {
          st->version += 1;
          st->size = 0;
          truncated = true;
        } else {
          err = ToErrno(s, "truncating");
        }
      }
    }
    if (err == 0 && !st->staged && st->base_size > 0) {
      content_.Prefetch(st->base_hash, st->base_size);
    }
  }
  if (err != 0) {
    Unpin(st);
    return err;
  }
  if (truncated) MarkWritten(ino, 0);
  auto h = std::make_shared<Handle>();
  h->state = st;
  h->flags = flags;
  h->direct = BypassesPageCache(flags, attr.mode);
  h->wrote = truncated;
  {
    MutexLock lock(st->mu);
    h->version_hash = st->base_hash;
    h->version_size = st->base_size;
  }
  MutexLock lock(mu_);
  auto cached = page_cache_.find(ino);
  *keep_cache = cached != page_cache_.end() && cached->second == attr.hash && !truncated;
  page_cache_[ino] = attr.hash;
  *fh = next_fh_++;
  handles_[*fh] = std::move(h);
  return 0;
}

int BucketFs::Create(Ino parent, const std::string& name, uint32_t mode, int flags,
                     const FsCaller& caller, Ino* ino, NodeAttr* attr, uint64_t* fh) {
  if (options_.read_only) return EROFS;
  std::string path;
  {
    MutexLock ns(ns_mu_);
    NodeAttr dir;
    if (int err = ChildPath(parent, name, &path, &dir); err != 0) return err;
    NodeAttr existing;
    if (meta_.Stat(path, &existing).ok()) {
      if ((flags & O_EXCL) != 0) return EEXIST;
      if (existing.kind == NodeKind::kDirectory) return EISDIR;
    } else {
      *attr = NewNodeAttr(NodeKind::kFile, mode, caller.uid, caller.gid, NowMs());
      InheritGroup(dir, attr);
      attr->pending = true;
      attr->on_server = false;
      meta_.Put(path, *attr);
      // The directory changed too; stored with its next change that reaches the server.
      dir.mtime_ms = dir.ctime_ms = attr->mtime_ms;
      ApplyTouched({{ParentPath(path), dir}});
    }
  }
  *ino = inodes_.Lookup(path);
  bool keep_cache = false;
  if (int err = Open(*ino, flags, fh, &keep_cache); err != 0) return err;
  std::shared_ptr<Handle> h;
  {
    MutexLock lock(mu_);
    h = handles_[*fh];
  }
  {
    MutexLock lock(h->state->mu);
    if (int err = EnsureStaged(*h->state); err != 0) return err;
    // A new file is committed at its close even if nothing is written to it.
    if (!h->state->dirty() && h->state->commit_attempts == 0 && h->state->base_size == 0 &&
        h->state->base_hash == Hash{}) {
      h->state->version += 1;
    }
  }
  h->wrote = true;
  return GetAttr(*ino, attr);
}

int BucketFs::Read(uint64_t fh, uint64_t offset, std::span<uint8_t> out, size_t* n) {
  std::shared_ptr<Handle> h = HandleFor(fh);
  if (!h) return EBADF;
  FileState& st = *h->state;
  {
    MutexLock lock(st.mu);
    if (st.staged) {
      auto r = st.staged->Read(offset, out, [&](uint64_t off, std::span<uint8_t> buf) {
        st.mu.AssertHeld();  // called by Read under the lock
        return ReadBase(st, off, buf);
      });
      if (!r.ok()) return ToErrno(r.status(), "reading");
      *n = *r;
      return 0;
    }
  }
  // The committed version this descriptor opened, even if a later open moved the file on
  // to another client's newer version.
  std::shared_ptr<FileStream> stream;
  {
    MutexLock lock(h->mu);
    if (!h->stream) h->stream = content_.Open(h->version_hash, h->version_size);
    stream = h->stream;
  }
  auto r = stream->Read(offset, out);
  if (!r.ok()) return ToErrno(r.status(), "reading");
  *n = *r;
  return 0;
}

int BucketFs::Write(uint64_t fh, uint64_t offset, std::span<const uint8_t> data) {
  std::shared_ptr<Handle> h = HandleFor(fh);
  if (!h) return EBADF;
  if (!Writable(h->flags)) return EBADF;
  FileState& st = *h->state;
  uint64_t size = 0;
  {
    MutexLock lock(st.mu);
    if (st.commit_pending) {
      commits_->Expedite();  // a writer waits: no point gathering more files first
      while (st.commit_pending) st.changed.Wait(st.mu);
    }
    if (int err = EnsureStaged(st); err != 0) return err;
    const uint64_t before = st.staged->size();
    if (offset != before) {
      StopStream(st);
    } else if (before == 0 && st.staged->base_kept() == 0) {
      st.appending = true;
    }
    Status s = st.staged->Write(offset, data);
    if (!s.ok()) {
      StopStream(st);
      return ToErrno(s, "writing");
    }
    st.version += 1;
    size = st.staged->size();
    st.size = size;
    FeedStream(st);
    if (h->direct) st.page_cache_stale = true;
  }
  if (h->direct) {  // the kernel did not see these bytes: what it cached is not the content
    MutexLock lock(mu_);
    page_cache_.erase(st.ino);
  }
  h->wrote = true;
  MarkWritten(st.ino, size);
  return 0;
}

int BucketFs::Flush(uint64_t fh) {
  std::shared_ptr<Handle> h = HandleFor(fh);
  if (!h) return EBADF;
  if (h->wrote) QueueCommit(*h->state);
  return 0;
}

void BucketFs::QueueCommit(FileState& st) {
  {
    MutexLock lock(st.mu);
    if (!st.dirty()) return;
    st.commit_pending = true;
  }
  commits_->Enqueue(st.ino);
}

void BucketFs::Release(uint64_t fh) {
  std::shared_ptr<Handle> h;
  {
    MutexLock lock(mu_);
    auto it = handles_.find(fh);
    if (it == handles_.end()) return;
    h = std::move(it->second);
    handles_.erase(it);
  }
  if (h->wrote) QueueCommit(*h->state);
  Unpin(h->state);
}

int BucketFs::Fsync(uint64_t fh) {
  std::shared_ptr<Handle> h = HandleFor(fh);
  if (!h) return EBADF;
  FileState& st = *h->state;
  MutexLock lock(st.mu);
  const uint64_t target = st.version;
  while (st.committed_version < target) {
    const uint64_t attempts = st.commit_attempts;
    commits_->Enqueue(st.ino);
    while (st.commit_attempts == attempts) st.changed.Wait(st.mu);
    if (st.committed_version < target && !st.commit_error.ok()) return EIO;
  }
  return 0;
}

int BucketFs::Fallocate(uint64_t fh, int mode, uint64_t offset, uint64_t length) {
  if (mode != 0) return EOPNOTSUPP;
  std::shared_ptr<Handle> h = HandleFor(fh);
  if (!h) return EBADF;
  if (!Writable(h->flags)) return EBADF;
  FileState& st = *h->state;
  uint64_t size = 0;
  {
    MutexLock lock(st.mu);
    if (int err = EnsureStaged(st); err != 0) return err;
    if (offset + length > st.staged->size()) {
      StopStream(st);
      Status s = st.staged->Truncate(offset + length);
      if (!s.ok()) return ToErrno(s, "allocating");
      st.version += 1;
    }
    size = st.staged->size();
    st.size = size;
  }
  h->wrote = true;
  MarkWritten(st.ino, size);
  return 0;
}

void BucketFs::FeedStream(FileState& st) {
  st.mu.AssertHeld();
  if (!st.appending) return;
  const uint64_t size = st.staged->size();
  if (st.stream) {
    st.stream->Extend(size);
    return;
  }
  if (size < kStreamMinBytes || streams_.load() >= kMaxStreams) return;
  auto cas = WriteCas();
  if (!cas.ok()) return;  // the commit uploads it
  UploadItem whole;
  whole.size_hint = size;
  st.stream = std::make_unique<StreamingUpload>(
      **cas, CommitUploadOptions(std::span<const UploadItem>(&whole, 1)), st.staged->path(), size,
      streams_);
}

void BucketFs::StopStream(FileState& st) {
  st.mu.AssertHeld();
  st.appending = false;
  st.stream.reset();
}

std::optional<UploadedFile> BucketFs::FinishStream(FileState& st) {
  st.mu.AssertHeld();
  std::unique_ptr<StreamingUpload> stream = std::move(st.stream);
  st.appending = false;
  if (!stream || !st.staged || stream->end() != st.staged->size()) return std::nullopt;
  auto result = stream->Finish();
  if (!result.ok()) {
    std::fprintf(stderr, "xetstore mount: streaming upload failed, uploading whole: %s\n",
                 result.status().ToString().c_str());
    return std::nullopt;
  }
  return *result;
}

int BucketFs::SyncAll() { return commits_ && !commits_->Drain() ? EIO : 0; }

UploadOptions BucketFs::CommitUploadOptions(std::span<const UploadItem> items) const {
  UploadOptions options;
  uint64_t largest = 0;
  for (const UploadItem& item : items) largest = std::max(largest, item.size_hint);
  if (largest >= kSmallFileBytes) {
    options.shard_cache_dir = conn_.ShardCacheDir(options_.bucket_id);
  } else {
    options.global_dedup = false;
    options.upload_concurrency = 2;  // at most a few small xorbs
  }
  return options;
}

Result<CasClient*> BucketFs::WriteCas() {
  MutexLock lock(cas_mu_);
  if (!write_cas_) {
    XET_ASSIGN_OR_RETURN(write_cas_, conn_.OpenCas(options_.bucket_id, /*write=*/true));
  }
  return &write_cas_->client();
}

// Commits a group of files: each staged copy is completed (the bytes of the previous
// version it never needed are fetched), the group is uploaded in one Uploader session
// (only chunks the server lacks are sent), and one batch registers every file still
// linked, with its metadata. The files' locks are held throughout, so writes to them wait
// and what is committed is one version of each. Returns the inodes to retry.
std::vector<Ino> BucketFs::CommitGroup(const std::vector<Ino>& inos) NO_THREAD_SAFETY_ANALYSIS {
  std::vector<std::shared_ptr<FileState>> states;
  {
    MutexLock lock(mu_);
    for (Ino ino : inos) {
      auto it = files_.find(ino);
      if (it == files_.end()) continue;
      it->second->pins += 1;
      states.push_back(it->second);
    }
  }
  for (auto& st : states) st->mu.Lock();  // ascending inode order: no other thread locks two

  struct Work {
    FileState* st;
    uint64_t version;
    // Uploaded already: streamed while written, or as an edit of its base.
    std::optional<UploadedFile> early;
  };
  std::vector<Work> work;
  std::vector<Ino> failed;
  Status error;
  // A partly rewritten existing file: only the windows around its changes are read and
  // uploaded (client/upload/partial_edit.h). Any failure falls back to the whole file.
  // (A lambda is analysed on its own: it is handed the guarded fields it needs.)
  const auto upload_edit = [&](StagedFile& staged, const Hash& base_hash,
                               uint64_t base_size) -> std::optional<UploadedFile> {
    if (base_size < kPartialEditMinBytes || base_hash == Hash{}) return std::nullopt;
    auto cas = WriteCas();
    if (!cas.ok()) return std::nullopt;
    // Only the ranges around the changes are fetched: a stream without read-ahead.
    const std::unique_ptr<FileStream> stream = content_.OpenForRanges(base_hash, base_size);
    const StagedFile::RemoteRead remote = [&](uint64_t off, std::span<uint8_t> buf) {
      return ReadStreamFully(*stream, off, buf);
    };
    StagedContent content(staged, remote);
    PartialEditOptions options;
    options.min_base_size = kPartialEditMinBytes;
    UploadItem whole;
    whole.size_hint = staged.size();
    options.upload = CommitUploadOptions(std::span<const UploadItem>(&whole, 1));
    auto result = UploadEdited(**cas, EditOf(staged, base_hash, base_size), content, options);
    if (!result.ok()) {
      std::fprintf(stderr, "xetstore mount: partial upload failed, uploading whole: %s\n",
                   result.status().ToString().c_str());
      return std::nullopt;
    }
    return *result;
  };
  for (auto& st : states) {
    if (!st->dirty() || !st->staged) continue;
    const StagedFile::RemoteRead remote = [&](uint64_t off, std::span<uint8_t> buf) {
      return ReadBase(*st, off, buf);
    };
    std::optional<UploadedFile> early = FinishStream(*st);
    if (!early) early = upload_edit(*st->staged, st->base_hash, st->base_size);
    if (!early) {
      if (Status s = st->staged->FetchAll(remote); !s.ok()) {
        st->commit_error = s;
        ToErrno(s, "committing");
        failed.push_back(st->ino);
        continue;
      }
    }
    work.push_back({st.get(), st->version, std::move(early)});
  }

  std::vector<UploadItem> items;
  std::vector<size_t> item_work;  // the work index of each item
  for (size_t i = 0; i < work.size(); ++i) {
    if (work[i].early) continue;
    UploadItem item;
    item.name = work[i].st->staged->path();
    item.size_hint = work[i].st->staged->size();
    item.open = [path = item.name] { return OpenFileSource(path); };
    items.push_back(std::move(item));
    item_work.push_back(i);
  }
  std::vector<UploadedFile> uploaded(work.size());
  for (size_t i = 0; i < work.size(); ++i) {
    if (work[i].early) uploaded[i] = *work[i].early;
  }
  if (!items.empty()) {
    const auto upload = [&]() -> Result<std::vector<UploadedFile>> {
      XET_ASSIGN_OR_RETURN(auto cas, WriteCas());
      Uploader uploader(*cas, CommitUploadOptions(items));
      return uploader.Upload(items);
    };
    Result<std::vector<UploadedFile>> files = upload();
    if (files.ok()) {
      for (size_t k = 0; k < files->size(); ++k) uploaded[item_work[k]] = (*files)[k];
    } else {
      error = files.status();
    }
  }
  // Each file's outcome: one refused operation must not hold back the others of its group.
  std::vector<Status> outcome(work.size(), error);
  for (size_t i = 0; i < work.size(); ++i) {
    if (work[i].early) outcome[i] = Status::Ok();
  }
  if (!work.empty()) {
    MutexLock ns(ns_mu_);
    std::vector<std::pair<size_t, std::string>> todo;  // work index, path
    for (size_t i = 0; i < work.size(); ++i) {
      if (!outcome[i].ok()) continue;
      if (auto path = inodes_.Path(work[i].st->ino)) todo.emplace_back(i, *path);
      // else: unlinked meanwhile, nothing to register
    }
    for (int attempt = 0; attempt < 2 && !todo.empty(); ++attempt) {
      std::vector<RemoteOp> ops;
      for (const auto& [i, path] : todo) {
        NodeAttr attr;
        (void)meta_.Stat(path, &attr);
        RemoteOp op;
        op.kind = RemoteOp::Kind::kAddFile;
        op.path = RemotePath(path);
        op.xet_hash = uploaded[i].file_hash;
        op.mtime_ms = attr.mtime_ms;
        op.posix = PosixFromAttr(attr);
        ops.push_back(std::move(op));
      }
      auto result = options_.read_only ? Result<BatchOutcome>(Status::Unavailable("read-only"))
                                       : conn_.hub().Batch(options_.bucket_id, ops);
      if (!result.ok()) {
        for (const auto& item : todo) outcome[item.first] = result.status();
        break;
      }
      if (result->failed.empty()) {
        for (const auto& [i, path] : todo) {
          const Hash hash = uploaded[i].file_hash;
          const uint64_t size = work[i].st->staged->size();
          meta_.Update(path, [&](NodeAttr& a) {
            a.hash = hash;
            a.size = size;
            a.pending = false;
            a.on_server = true;
            a.has_posix = true;
          });
        }
        break;
      }
      // The batch applied nothing: drop the refused files and send the rest again.
      std::vector<std::pair<size_t, std::string>> rest;
      for (const auto& item : todo) {
        const std::string remote = RemotePath(item.second);
        auto f = std::find_if(result->failed.begin(), result->failed.end(),
                              [&](const BatchOutcome::Failure& x) { return x.path == remote; });
        if (f != result->failed.end() || attempt == 1) {
          outcome[item.first] =
              Status::IoError("the server refused " + remote + ": " +
                              (f != result->failed.end() ? f->error : std::string("batch failed")));
        } else {
          rest.push_back(item);
        }
      }
      todo = std::move(rest);
    }
  }

  std::vector<bool> cache_current(work.size(), false);  // the kernel's cache holds the commit
  for (size_t i = 0; i < work.size(); ++i) {
    FileState& st = *work[i].st;
    cache_current[i] = !st.page_cache_stale;
    if (outcome[i].ok()) st.page_cache_stale = false;
    if (outcome[i].ok()) {
      st.base_hash = uploaded[i].file_hash;
      st.base_size = st.staged->size();
      st.staged->MarkCommitted();
      st.appending = false;
      st.base_stream.reset();
      st.committed_version = work[i].version;
      st.commit_error = Status::Ok();
    } else {
      st.commit_error = outcome[i];
      failed.push_back(st.ino);
      ToErrno(outcome[i], "committing");
    }
  }
  for (auto& st : states) {
    st->commit_pending = false;
    st->commit_attempts += 1;
    st->changed.NotifyAll();
    st->mu.Unlock();
  }
  {
    // The page cache now holds the committed version.
    MutexLock lock(mu_);
    for (size_t i = 0; i < work.size(); ++i) {
      if (!outcome[i].ok()) continue;
      if (cache_current[i]) {
        page_cache_[work[i].st->ino] = uploaded[i].file_hash;
      } else {
        page_cache_.erase(work[i].st->ino);
      }
    }
  }
  for (auto& st : states) Unpin(st);
  std::sort(failed.begin(), failed.end());
  failed.erase(std::unique(failed.begin(), failed.end()), failed.end());
  return failed;
}

}  // namespace xet
