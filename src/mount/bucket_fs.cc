// BucketFs: construction, names, attributes, directories and extended attributes. The
// file content side (open, read, write, commit) is in bucket_fs_files.cc.
#include "mount/bucket_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "mount/bucket_fs_state.h"
#include "mount/mount_paths.h"
#include "protocol/bucket_path.h"
#include "protocol/posix_metadata.h"

namespace xet {

namespace {

constexpr size_t kMaxNameBytes = 255;
// How long a commit group waits for more closed files (a tar or cp -r closes hundreds a
// second): the delay before a closed file is on the server, bought for far fewer requests.
constexpr int64_t kCommitGatherMs = 200;
// Files in one commit group: it holds every file's lock for the upload (and ThreadSanitizer
// tracks at most 64 locks held by one thread).
constexpr size_t kMaxCommitGroup = 48;

int CheckName(const std::string& name) {
  if (name.empty() || name == "." || name == "..") return EINVAL;
  if (name.size() > kMaxNameBytes) return ENAMETOOLONG;
  return 0;
}

}  // namespace

BucketFs::BucketFs(const MountOptions& options, RemoteConnection& conn, ContentSource& content)
    : options_(options),
      conn_(conn),
      content_(content),
      meta_(conn.hub(), options_),
      staging_(options_.staging_dir) {
  std::error_code ec;
  std::filesystem::create_directories(options_.staging_dir, ec);
  for (const auto& e : std::filesystem::directory_iterator(options_.staging_dir, ec)) {
    if (e.path().filename().string().rfind("staged-", 0) == 0) {
      std::filesystem::remove(e.path(), ec);
    }
  }
  commits_ = std::make_unique<CommitQueue>(
      [this](const std::vector<Ino>& inos) { return CommitGroup(inos); }, kCommitGatherMs,
      kMaxCommitGroup);
}

BucketFs::~BucketFs() { Shutdown(); }

void BucketFs::Shutdown() {
  if (commits_) {
    commits_->Drain();
    commits_.reset();
  }
  // Streaming uploads of files never committed use the CAS client: stopped before it goes.
  std::vector<std::shared_ptr<FileState>> states;
  {
    MutexLock lock(mu_);
    for (const auto& entry : files_) states.push_back(entry.second);
  }
  for (const auto& st : states) {
    MutexLock lock(st->mu);
    StopStream(*st);
  }
}

Status BucketFs::Check() {
  XET_ASSIGN_OR_RETURN(RemoteBucket bucket, conn_.hub().GetBucket(options_.bucket_id));
  (void)bucket;
  std::vector<std::pair<std::string, NodeAttr>> root;
  XET_RETURN_IF_ERROR(meta_.List("", &root));
  if (!options_.read_only) XET_RETURN_IF_ERROR(WriteCas().status());
  return Status::Ok();
}

int64_t BucketFs::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int BucketFs::ToErrno(const Status& st, const char* what) const {
  int err = EIO;
  switch (st.code()) {
    case Status::Code::kOk:
      return 0;
    case Status::Code::kNotFound:
      return ENOENT;
    case Status::Code::kPermissionDenied:
    case Status::Code::kUnauthenticated:
      err = EACCES;
      break;
    case Status::Code::kInsufficientStorage:
      err = ENOSPC;
      break;
    case Status::Code::kAlreadyExists:
      return EEXIST;
    case Status::Code::kResourceExhausted:
      err = EFBIG;
      break;
    default:
      break;
  }
  std::fprintf(stderr, "xetstore mount: %s: %s\n", what, st.ToString().c_str());
  return err;
}

std::string BucketFs::RemotePath(const std::string& path) const {
  if (options_.prefix.empty()) return path;
  return path.empty() ? options_.prefix : options_.prefix + "/" + path;
}

int BucketFs::PathOf(Ino ino, std::string* path) const {
  auto p = inodes_.Path(ino);
  if (!p) return ENOENT;
  *path = std::move(*p);
  return 0;
}

int BucketFs::ChildPath(Ino parent, const std::string& name, std::string* path,
                        NodeAttr* parent_attr) {
  if (int err = CheckName(name); err != 0) return err;
  std::string dir;
  if (int err = PathOf(parent, &dir); err != 0) return err;
  NodeAttr dir_attr;
  if (int err = StatPath(dir, &dir_attr); err != 0) return err;
  if (dir_attr.kind != NodeKind::kDirectory) return ENOTDIR;
  if (parent_attr != nullptr) *parent_attr = dir_attr;
  *path = JoinPath(dir, name);
  // Paths a bucket cannot hold: longer than its limit, or a name that is not UTF-8 or holds
  // a control character or '\\' (protocol/bucket_path.h).
  const std::string remote = RemotePath(*path);
  if (remote.size() > kMaxBucketPathBytes) return ENAMETOOLONG;
  if (!ValidateBucketPath(remote).ok()) return EINVAL;
  return 0;
}

int BucketFs::StatPath(const std::string& path, NodeAttr* attr) {
  Status st = meta_.Stat(path, attr);
  if (!st.ok()) return ToErrno(st, "listing");
  return 0;
}

int BucketFs::RunBatch(std::vector<RemoteOp> ops) {
  if (options_.read_only) return EROFS;
  auto outcome = conn_.hub().Batch(options_.bucket_id, ops);
  if (!outcome.ok()) return ToErrno(outcome.status(), "updating the bucket");
  if (outcome->failed.empty()) return 0;
  const std::string& why = outcome->failed.front().error;
  std::fprintf(stderr, "xetstore mount: %s: %s\n", outcome->failed.front().path.c_str(),
               why.c_str());
  if (why.find("nothing at") != std::string::npos) return ENOENT;
  if (why.find("exists") != std::string::npos) return EEXIST;
  return EIO;
}

// A change of `path`'s name (created, removed, renamed) is a change of its directory: the
// directory's mtime and ctime become `now`, stored with an explicit directory entry (which
// also keeps the directory when its last entry goes). Adds the operation to `ops` and
// returns the directory's new attributes, to cache once the batch succeeded; the mount's
// root has no entry and is updated in this mount only.
int BucketFs::TouchParentOp(const std::string& path, int64_t now, std::vector<RemoteOp>* ops,
                            std::vector<std::pair<std::string, NodeAttr>>* touched) {
  const std::string parent = ParentPath(path);
  for (const auto& t : *touched) {
    if (t.first == parent) return 0;  // already in this batch
  }
  NodeAttr attr;
  if (int err = StatPath(parent, &attr); err != 0) return err;
  attr.mtime_ms = attr.ctime_ms = now;
  if (!parent.empty()) {
    RemoteOp op;
    op.kind = attr.has_posix ? RemoteOp::Kind::kSetMetadata : RemoteOp::Kind::kAddDirectory;
    op.path = RemotePath(parent);
    op.mtime_ms = now;
    op.posix = PosixFromAttr(attr);
    ops->push_back(std::move(op));
    attr.has_posix = true;
  }
  touched->emplace_back(parent, attr);
  return 0;
}

void BucketFs::ApplyTouched(const std::vector<std::pair<std::string, NodeAttr>>& touched) {
  for (const auto& [path, attr] : touched) {
    if (path.empty()) {
      meta_.SetRootAttr(attr);
    } else {
      meta_.Put(path, attr);
    }
  }
}

// A file that is open keeps its content after its name is removed, but the server stops
// serving a file no entry refers to: before the name goes, every byte of it is made local.
// (Taken before ns_mu_: a file's lock is never taken under it.)
int BucketFs::PreserveOpenContent(Ino parent, const std::string& name) {
  std::string path;
  if (ChildPath(parent, name, &path) != 0) return 0;  // the operation reports it
  auto ino = inodes_.Find(path);
  if (!ino) return 0;
  auto st = FindState(*ino);
  if (!st) return 0;
  MutexLock lock(st->mu);
  if (int err = EnsureStaged(*st); err != 0) return err;
  Status s = st->staged->FetchAll([&](uint64_t off, std::span<uint8_t> buf) {
    st->mu.AssertHeld();  // called by FetchAll under the lock
    return ReadBase(*st, off, buf);
  });
  return s.ok() ? 0 : ToErrno(s, "keeping an unlinked open file");
}

// An open file losing its name keeps its attributes for fstat and fchmod while open. So
// does a special file the kernel knows (a FIFO or socket may be open without the mount
// seeing it) until the kernel forgets it.
void BucketFs::KeepDetachedAttr(const std::string& path, const NodeAttr& attr) {
  auto ino = inodes_.Find(path);
  if (!ino || (!IsSpecialKind(attr.kind) && !FindState(*ino))) return;
  NodeAttr kept = attr;
  kept.unlinked = true;
  MutexLock lock(mu_);
  detached_[*ino] = std::move(kept);
}

// In a directory with S_ISGID, new entries take its group, and new directories the bit.
void BucketFs::InheritGroup(const NodeAttr& dir, NodeAttr* attr) {
  if ((dir.mode & S_ISGID) == 0) return;
  attr->gid = dir.gid;
  if (attr->kind == NodeKind::kDirectory) attr->mode |= S_ISGID;
}

int BucketFs::Lookup(Ino parent, const std::string& name, Ino* ino, NodeAttr* attr) {
  if (name.size() > kMaxNameBytes) return ENAMETOOLONG;
  std::string path;
  if (int err = ChildPath(parent, name, &path); err != 0) {
    return err == EINVAL ? ENOENT : err;  // a name no entry can have
  }
  if (int err = StatPath(path, attr); err != 0) return err;
  *ino = inodes_.Lookup(path);
  if (auto size = OpenSize(*ino)) attr->size = *size;
  return 0;
}

void BucketFs::Forget(Ino ino, uint64_t n) {
  if (!inodes_.Forget(ino, n)) return;
  // A detached special file's attributes go with its inode (an open file's with its state).
  MutexLock lock(mu_);
  if (files_.count(ino) == 0) detached_.erase(ino);
}

int BucketFs::GetAttr(Ino ino, NodeAttr* attr) {
  std::string path;
  if (int err = PathOf(ino, &path); err != 0) {
    auto st = FindState(ino);
    // Unlinked but open (or a special file): what it was when unlinked, with its current
    // size.
    {
      MutexLock lock(mu_);
      auto it = detached_.find(ino);
      if (it == detached_.end()) return err;
      *attr = it->second;
    }
    if (st) attr->size = st->size.load();
    return 0;
  }
  if (int err = StatPath(path, attr); err != 0) return err;
  if (auto size = OpenSize(ino)) attr->size = *size;
  return 0;
}

int BucketFs::UpdateMetadata(Ino ino, const std::function<int(NodeAttr&)>& change) {
  if (options_.read_only) return EROFS;
  MutexLock ns(ns_mu_);
  std::string path;
  if (int err = PathOf(ino, &path); err != 0) {
    // Unlinked but open: the change stays with the open file.
    MutexLock lock(mu_);
    auto it = detached_.find(ino);
    if (it == detached_.end()) return err;
    if (int e = change(it->second); e != 0) return e;
    it->second.ctime_ms = NowMs();
    return 0;
  }
  NodeAttr attr;
  if (int err = StatPath(path, &attr); err != 0) return err;
  if (int err = change(attr); err != 0) return err;
  attr.ctime_ms = NowMs();
  attr.has_posix = true;
  // A file not yet on the server takes its metadata along with its first commit; the
  // mount's root has no entry (its attributes stay in this mount).
  if (!path.empty() && attr.on_server) {
    RemoteOp op;
    op.kind = RemoteOp::Kind::kSetMetadata;
    op.path = RemotePath(path);
    op.mtime_ms = attr.mtime_ms;
    op.posix = PosixFromAttr(attr);
    if (int err = RunBatch({std::move(op)}); err != 0) return err;
  }
  if (path.empty()) {
    meta_.SetRootAttr(attr);
  } else {
    meta_.Put(path, attr);
  }
  return 0;
}

int BucketFs::SetAttr(Ino ino, const SetAttrRequest& req, const FsCaller& caller, NodeAttr* out) {
  (void)caller;
  if (options_.read_only) return EROFS;
  if (req.size) {
    std::string path;
    NodeAttr attr;
    if (int err = PathOf(ino, &path); err == 0) {
      if (int e = StatPath(path, &attr); e != 0) return e;
      if (attr.kind == NodeKind::kDirectory) return EISDIR;
      if (attr.kind != NodeKind::kFile) return EINVAL;
    } else if (!FindState(ino)) {
      return err;
    }
    auto st = PinState(ino, attr);
    int err = 0;
    {
      MutexLock lock(st->mu);
      err = EnsureStaged(*st);
      if (err == 0 && st->staged->size() != *req.size) {
        StopStream(*st);
        Status s = st->staged->Truncate(*req.size);
        if (s.ok()) {
          st->version += 1;
          st->size = *req.size;
        } else {
          err = ToErrno(s, "truncating");
        }
      }
    }
    if (err == 0) {
      MarkWritten(ino, *req.size);
      // Through an open file the commit comes with its close; otherwise now.
      std::shared_ptr<Handle> h = req.fh ? HandleFor(*req.fh) : nullptr;
      if (h) {
        h->wrote = true;
      } else {
        commits_->Enqueue(ino);
      }
    }
    Unpin(st);
    if (err != 0) return err;
  }
  if (req.mode || req.uid || req.gid || req.atime_ms || req.mtime_ms) {
    int err = UpdateMetadata(ino, [&](NodeAttr& a) {
      if (req.mode) a.mode = *req.mode & 07777;
      if (req.uid) a.uid = *req.uid;
      if (req.gid) a.gid = *req.gid;
      if (req.atime_ms) a.atime_ms = *req.atime_ms;
      if (req.mtime_ms) a.mtime_ms = *req.mtime_ms;
      return 0;
    });
    if (err != 0) return err;
  }
  return GetAttr(ino, out);
}

int BucketFs::ReadLink(Ino ino, std::string* target) {
  NodeAttr attr;
  if (int err = GetAttr(ino, &attr); err != 0) return err;
  if (attr.kind != NodeKind::kSymlink) return EINVAL;
  *target = attr.target;
  return 0;
}

int BucketFs::MkDir(Ino parent, const std::string& name, uint32_t mode, const FsCaller& caller,
                    Ino* ino, NodeAttr* attr) {
  if (options_.read_only) return EROFS;
  MutexLock ns(ns_mu_);
  std::string path;
  NodeAttr dir;
  if (int err = ChildPath(parent, name, &path, &dir); err != 0) return err;
  NodeAttr existing;
  if (meta_.Stat(path, &existing).ok()) return EEXIST;
  *attr = NewNodeAttr(NodeKind::kDirectory, mode, caller.uid, caller.gid, NowMs());
  InheritGroup(dir, attr);
  std::vector<RemoteOp> ops;
  std::vector<std::pair<std::string, NodeAttr>> touched;
  if (int err = TouchParentOp(path, attr->mtime_ms, &ops, &touched); err != 0) return err;
  RemoteOp op;
  op.kind = RemoteOp::Kind::kAddDirectory;
  op.path = RemotePath(path);
  op.mtime_ms = attr->mtime_ms;
  op.posix = PosixFromAttr(*attr);
  ops.push_back(std::move(op));
  if (int err = RunBatch(std::move(ops)); err != 0) return err;
  ApplyTouched(touched);
  meta_.Put(path, *attr);
  *ino = inodes_.Lookup(path);
  return 0;
}

int BucketFs::Symlink(const std::string& target, Ino parent, const std::string& name,
                      const FsCaller& caller, Ino* ino, NodeAttr* attr) {
  if (options_.read_only) return EROFS;
  if (target.empty() || target.size() > kMaxSymlinkTargetBytes) return ENAMETOOLONG;
  *attr = NewNodeAttr(NodeKind::kSymlink, 0777, caller.uid, caller.gid, 0);
  attr->target = target;
  attr->size = target.size();
  return AddContentless(parent, name, ino, attr);
}

int BucketFs::MkNod(Ino parent, const std::string& name, uint32_t mode, uint64_t rdev,
                    const FsCaller& caller, Ino* ino, NodeAttr* attr) {
  if (options_.read_only) return EROFS;
  const uint32_t type = mode & S_IFMT;
  if (type == 0 || type == S_IFREG) {
    // An empty regular file, as open(O_CREAT | O_EXCL) and close make it.
    uint64_t fh = 0;
    if (int err = Create(parent, name, mode & 07777, O_WRONLY | O_EXCL, caller, ino, attr, &fh);
        err != 0) {
      return err;
    }
    Release(fh);
    return 0;
  }
  const std::optional<NodeKind> kind = KindOfType(type);
  if (!kind || !IsSpecialKind(*kind)) return EINVAL;
  const bool device = *kind == NodeKind::kCharDevice || *kind == NodeKind::kBlockDevice;
  if (device && rdev > kMaxPosixRdev) return EINVAL;
  *attr = NewNodeAttr(*kind, mode, caller.uid, caller.gid, 0);
  attr->rdev = device ? static_cast<uint32_t>(rdev) : 0;
  return AddContentless(parent, name, ino, attr);
}

int BucketFs::AddContentless(Ino parent, const std::string& name, Ino* ino, NodeAttr* attr) {
  MutexLock ns(ns_mu_);
  std::string path;
  NodeAttr dir;
  if (int err = ChildPath(parent, name, &path, &dir); err != 0) return err;
  NodeAttr existing;
  if (meta_.Stat(path, &existing).ok()) return EEXIST;
  attr->mtime_ms = attr->atime_ms = attr->ctime_ms = NowMs();
  InheritGroup(dir, attr);
  std::vector<RemoteOp> ops;
  std::vector<std::pair<std::string, NodeAttr>> touched;
  if (int err = TouchParentOp(path, attr->mtime_ms, &ops, &touched); err != 0) return err;
  RemoteOp op;
  op.kind = RemoteOp::Kind::kAddFile;
  op.path = RemotePath(path);
  op.xet_hash = Hash{};  // the entry is the empty file
  op.mtime_ms = attr->mtime_ms;
  op.posix = PosixFromAttr(*attr);
  ops.push_back(std::move(op));
  if (int err = RunBatch(std::move(ops)); err != 0) return err;
  ApplyTouched(touched);
  meta_.Put(path, *attr);
  *ino = inodes_.Lookup(path);
  return 0;
}

int BucketFs::Unlink(Ino parent, const std::string& name) {
  if (options_.read_only) return EROFS;
  if (int err = PreserveOpenContent(parent, name); err != 0) return err;
  MutexLock ns(ns_mu_);
  std::string path;
  if (int err = ChildPath(parent, name, &path); err != 0) return err;
  NodeAttr attr;
  if (int err = StatPath(path, &attr); err != 0) return err;
  if (attr.kind == NodeKind::kDirectory) return EISDIR;
  std::vector<RemoteOp> ops;
  std::vector<std::pair<std::string, NodeAttr>> touched;
  if (int err = TouchParentOp(path, NowMs(), &ops, &touched); err != 0) return err;
  if (attr.on_server) {  // else: a file created here and not committed yet
    RemoteOp op;
    op.kind = RemoteOp::Kind::kDeleteFile;
    op.path = RemotePath(path);
    ops.push_back(std::move(op));
  }
  if (!ops.empty()) {
    if (int err = RunBatch(std::move(ops)); err != 0) return err;
  }
  ApplyTouched(touched);
  meta_.Remove(path);
  KeepDetachedAttr(path, attr);
  inodes_.Detach(path);
  return 0;
}

int BucketFs::RmDir(Ino parent, const std::string& name) {
  if (options_.read_only) return EROFS;
  MutexLock ns(ns_mu_);
  std::string path;
  if (int err = ChildPath(parent, name, &path); err != 0) return err;
  NodeAttr attr;
  if (int err = StatPath(path, &attr); err != 0) return err;
  if (attr.kind != NodeKind::kDirectory) return ENOTDIR;
  auto empty = meta_.IsEmptyDirectory(path);
  if (!empty.ok()) return ToErrno(empty.status(), "listing");
  if (!*empty) return ENOTEMPTY;
  std::vector<RemoteOp> ops;
  std::vector<std::pair<std::string, NodeAttr>> touched;
  if (int err = TouchParentOp(path, NowMs(), &ops, &touched); err != 0) return err;
  RemoteOp op;
  op.kind = RemoteOp::Kind::kDeleteFile;
  op.path = RemotePath(path);
  ops.push_back(std::move(op));
  if (int err = RunBatch(std::move(ops)); err != 0) return err;
  ApplyTouched(touched);
  meta_.Remove(path);
  inodes_.Detach(path);
  return 0;
}

int BucketFs::Rename(Ino parent, const std::string& name, Ino new_parent,
                     const std::string& new_name, unsigned flags) {
  if (options_.read_only) return EROFS;
  if ((flags & RENAME_EXCHANGE) != 0) return EINVAL;
  if ((flags & ~static_cast<unsigned>(RENAME_NOREPLACE)) != 0) return EINVAL;
  if (int err = PreserveOpenContent(new_parent, new_name); err != 0) return err;
  MutexLock ns(ns_mu_);
  std::string from, to;
  if (int err = ChildPath(parent, name, &from); err != 0) return err;
  if (int err = ChildPath(new_parent, new_name, &to); err != 0) return err;
  NodeAttr src;
  if (int err = StatPath(from, &src); err != 0) return err;
  if (from == to) return 0;
  if (src.kind == NodeKind::kDirectory && IsWithin(to, from)) return EINVAL;
  NodeAttr dst;
  const bool target_exists = meta_.Stat(to, &dst).ok();
  if (target_exists) {
    if ((flags & RENAME_NOREPLACE) != 0) return EEXIST;
    if (src.kind == NodeKind::kDirectory && dst.kind != NodeKind::kDirectory) return ENOTDIR;
    if (src.kind != NodeKind::kDirectory && dst.kind == NodeKind::kDirectory) return EISDIR;
    if (dst.kind == NodeKind::kDirectory) {
      auto empty = meta_.IsEmptyDirectory(to);
      if (!empty.ok()) return ToErrno(empty.status(), "listing");
      if (!*empty) return ENOTEMPTY;
    }
  }
  // A file that exists only here (created, not yet committed) moves locally: its commit
  // registers it under the new name.
  const bool local_only = !src.on_server;
  std::vector<RemoteOp> ops;
  std::vector<std::pair<std::string, NodeAttr>> touched;
  const int64_t now = NowMs();
  if (int err = TouchParentOp(from, now, &ops, &touched); err != 0) return err;
  if (int err = TouchParentOp(to, now, &ops, &touched); err != 0) return err;
  if (!local_only) {
    RemoteOp op;
    op.kind = RemoteOp::Kind::kMovePrefix;
    op.from = RemotePath(from);
    op.to = RemotePath(to);
    op.no_replace = (flags & RENAME_NOREPLACE) != 0;
    ops.push_back(std::move(op));
  } else if (target_exists && dst.on_server) {
    RemoteOp op;
    op.kind = RemoteOp::Kind::kDeleteFile;
    op.path = RemotePath(to);
    ops.push_back(std::move(op));
  }
  if (int err = RunBatch(std::move(ops)); err != 0) return err;
  ApplyTouched(touched);
  src.ctime_ms = now;
  if (target_exists) KeepDetachedAttr(to, dst);
  meta_.Move(from, to);
  meta_.Update(to, [&](NodeAttr& a) { a.ctime_ms = src.ctime_ms; });
  inodes_.Rename(from, to);
  return 0;
}

// --- extended attributes

int BucketFs::SetXattr(Ino ino, const std::string& name, std::string_view value, int flags) {
  if (name.empty() || name.size() > kMaxXattrNameBytes) return ERANGE;
  if (value.size() > kMaxXattrValueBytes) return E2BIG;
  if (name.rfind("user.", 0) != 0 && name.rfind("trusted.", 0) != 0) return ENOTSUP;
  return UpdateMetadata(ino, [&](NodeAttr& a) {
    auto it = std::lower_bound(a.xattrs.begin(), a.xattrs.end(), name,
                               [](const auto& kv, const std::string& n) { return kv.first < n; });
    const bool exists = it != a.xattrs.end() && it->first == name;
    if ((flags & XATTR_CREATE) != 0 && exists) return EEXIST;
    if ((flags & XATTR_REPLACE) != 0 && !exists) return ENODATA;
    if (exists) {
      it->second.assign(value);
    } else {
      if (a.xattrs.size() >= kMaxXattrs) return ENOSPC;
      a.xattrs.insert(it, {name, std::string(value)});
    }
    return 0;
  });
}

int BucketFs::GetXattr(Ino ino, const std::string& name, std::string* value) {
  NodeAttr attr;
  if (int err = GetAttr(ino, &attr); err != 0) return err;
  for (const auto& [k, v] : attr.xattrs) {
    if (k == name) {
      *value = v;
      return 0;
    }
  }
  return ENODATA;
}

int BucketFs::ListXattr(Ino ino, std::vector<std::string>* names) {
  NodeAttr attr;
  if (int err = GetAttr(ino, &attr); err != 0) return err;
  names->clear();
  for (const auto& kv : attr.xattrs) names->push_back(kv.first);
  return 0;
}

int BucketFs::RemoveXattr(Ino ino, const std::string& name) {
  return UpdateMetadata(ino, [&](NodeAttr& a) {
    auto it = std::find_if(a.xattrs.begin(), a.xattrs.end(),
                           [&](const auto& kv) { return kv.first == name; });
    if (it == a.xattrs.end()) return ENODATA;
    a.xattrs.erase(it);
    return 0;
  });
}

// --- directories

int BucketFs::OpenDir(Ino ino, uint64_t* fh) {
  std::string path;
  if (int err = PathOf(ino, &path); err != 0) return err;
  NodeAttr attr;
  if (int err = StatPath(path, &attr); err != 0) return err;
  if (attr.kind != NodeKind::kDirectory) return ENOTDIR;
  std::vector<std::pair<std::string, NodeAttr>> children;
  Status st = meta_.List(path, &children);
  if (!st.ok()) return ToErrno(st, "listing");
  auto dh = std::make_shared<DirHandle>();
  dh->entries.reserve(children.size());
  for (auto& [name, a] : children) {
    DirEntry e;
    e.ino = inodes_.Find(JoinPath(path, name)).value_or(0);
    e.kind = a.kind;
    e.name = std::move(name);
    dh->entries.push_back(std::move(e));
  }
  MutexLock lock(mu_);
  *fh = next_fh_++;
  dir_handles_[*fh] = std::move(dh);
  return 0;
}

const std::vector<DirEntry>* BucketFs::DirEntries(uint64_t fh) {
  MutexLock lock(mu_);
  auto it = dir_handles_.find(fh);
  return it == dir_handles_.end() ? nullptr : &it->second->entries;
}

void BucketFs::ReleaseDir(uint64_t fh) {
  MutexLock lock(mu_);
  dir_handles_.erase(fh);
}

}  // namespace xet
