// BucketFs: the file system a mount presents, in terms of inode numbers and errno values,
// independent of FUSE (mount/fuse_bridge.cc translates the kernel's requests into these
// calls). Names come from the bucket's tree listings (MetadataCache); file content is read
// through a ContentSource; written files are staged locally (StagedFile) and committed by
// a background CommitQueue: uploaded (only chunks the server lacks) and registered in one
// batch, so a remote file is always one whole version. Namespace changes (mkdir, unlink,
// rename, chmod, ...) are one batch each, applied before the call returns.
//
// Every call returns 0 or a positive errno; semantics per operation are written down in
// docs/MOUNT.md. Thread-safe: the kernel's requests arrive on many threads.
//
// Lock order: ns_mu_ (namespace changes and commit batches, one at a time) → mu_ (the
// tables); a file's FileState::mu may be held while taking ns_mu_, never the reverse.
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "client/bucket_transfer/remote_connection.h"
#include "client/upload/uploader.h"
#include "common/mutex.h"
#include "mount/commit_queue.h"
#include "mount/content_source.h"
#include "mount/inode_table.h"
#include "mount/metadata_cache.h"
#include "mount/mount_options.h"
#include "mount/node_attr.h"
#include "mount/staged_file.h"

namespace xet {

// Who asks: the caller's credentials from the kernel request.
struct FsCaller {
  uint32_t uid = 0;
  uint32_t gid = 0;
};

// A setattr request: each field present is to be changed.
struct SetAttrRequest {
  std::optional<uint32_t> mode;
  std::optional<uint32_t> uid;
  std::optional<uint32_t> gid;
  std::optional<uint64_t> size;
  std::optional<int64_t> atime_ms;
  std::optional<int64_t> mtime_ms;
  std::optional<uint64_t> fh;  // the open file the request came through, if any
};

struct DirEntry {
  std::string name;
  Ino ino = 0;  // 0 when the kernel has not looked it up yet
  NodeKind kind = NodeKind::kFile;
};

class BucketFs {
 public:
  // `conn` and `content` must outlive the file system. The staging directory is created
  // if missing and emptied of stale staging files.
  BucketFs(const MountOptions& options, RemoteConnection& conn, ContentSource& content);
  ~BucketFs();  // commits what is pending (Shutdown) first

  // Checks that the bucket (and prefix) can be read, and written unless read-only; the
  // error says what to fix.
  Status Check();

  // --- names and attributes
  int Lookup(Ino parent, const std::string& name, Ino* ino, NodeAttr* attr);
  void Forget(Ino ino, uint64_t n);
  int GetAttr(Ino ino, NodeAttr* attr);
  int SetAttr(Ino ino, const SetAttrRequest& req, const FsCaller& caller, NodeAttr* attr);
  int ReadLink(Ino ino, std::string* target);
  int MkDir(Ino parent, const std::string& name, uint32_t mode, const FsCaller& caller, Ino* ino,
            NodeAttr* attr);
  int Symlink(const std::string& target, Ino parent, const std::string& name,
              const FsCaller& caller, Ino* ino, NodeAttr* attr);
  // mknod(2), mkfifo(3), bind(2) of a socket: `mode` holds the type bits. A FIFO, socket
  // or device node is an entry without content (its posix carries the type, and `rdev` for
  // a device; rdev is ignored for the others), created in one batch with its directory's
  // times, as Symlink; a regular file (type S_IFREG, or none) is created empty as by Create
  // and committed in the background. EINVAL for another type or a device number past 32
  // bits; EEXIST, ENOTDIR, ENAMETOOLONG, EROFS as for every new name. Only the kernel
  // decides who may make a device node (CAP_MKNOD, checked before the request gets here).
  int MkNod(Ino parent, const std::string& name, uint32_t mode, uint64_t rdev,
            const FsCaller& caller, Ino* ino, NodeAttr* attr);
  int Unlink(Ino parent, const std::string& name);
  int RmDir(Ino parent, const std::string& name);
  // flags: 0 or RENAME_NOREPLACE (RENAME_EXCHANGE: EINVAL).
  int Rename(Ino parent, const std::string& name, Ino new_parent, const std::string& new_name,
             unsigned flags);

  // --- extended attributes (stored with the entry)
  int SetXattr(Ino ino, const std::string& name, std::string_view value, int flags);
  int GetXattr(Ino ino, const std::string& name, std::string* value);
  int ListXattr(Ino ino, std::vector<std::string>* names);
  int RemoveXattr(Ino ino, const std::string& name);

  // --- files
  // Whether a descriptor opened with `flags` on a file of permission bits `mode` bypasses
  // the kernel's page cache (FOPEN_DIRECT_IO): write-only ones do, so a large write is not
  // copied into cache pages nobody reads (no mmap needs them: a shared writable mapping
  // needs read access too), except on files with S_ISUID or S_ISGID. A write must clear
  // those bits unless the writer has CAP_FSETID; the kernel does it (with a SETATTR) on its
  // cached path only, and on the direct path leaves it to a write flag libfuse 3.14 does
  // not pass on.
  static bool BypassesPageCache(int flags, uint32_t mode);
  // Whether open handle `fh` bypasses the page cache (as decided when it was opened).
  bool HandleBypassesPageCache(uint64_t fh) const;
  // `keep_cache`: the kernel may keep its cached pages (the content did not change since
  // they were read).
  int Open(Ino ino, int flags, uint64_t* fh, bool* keep_cache);
  int Create(Ino parent, const std::string& name, uint32_t mode, int flags, const FsCaller& caller,
             Ino* ino, NodeAttr* attr, uint64_t* fh);
  int Read(uint64_t fh, uint64_t offset, std::span<uint8_t> out, size_t* n);
  int Write(uint64_t fh, uint64_t offset, std::span<const uint8_t> data);
  // close(): queues the commit of what this handle wrote.
  int Flush(uint64_t fh);
  void Release(uint64_t fh);
  // Returns once the file's content (as of the call) is committed on the server.
  int Fsync(uint64_t fh);
  // fallocate(mode 0): makes the file at least offset + length bytes long.
  int Fallocate(uint64_t fh, int mode, uint64_t offset, uint64_t length);

  // --- directories
  int OpenDir(Ino ino, uint64_t* fh);
  // The directory's entries as listed at OpenDir ("." and ".." not included).
  const std::vector<DirEntry>* DirEntries(uint64_t fh);
  void ReleaseDir(uint64_t fh);
  // fsyncdir: commits everything pending in the mount.
  int SyncAll();

  // Commits everything pending and stops the committer (unmount).
  void Shutdown();

  const MountOptions& options() const { return options_; }
  MetadataCache& metadata() { return meta_; }

 private:
  struct FileState;
  struct Handle;
  struct DirHandle;

  int PathOf(Ino ino, std::string* path) const;
  int StatPath(const std::string& path, NodeAttr* attr);
  int ChildPath(Ino parent, const std::string& name, std::string* path,
                NodeAttr* parent_attr = nullptr);
  static void InheritGroup(const NodeAttr& dir, NodeAttr* attr);
  // Creates an entry without content (a symbolic link or special file) described by
  // `*attr` (kind, mode, owner, target or rdev; times and group are set here): one batch
  // of addFile with the empty file's hash and the parent's times.
  int AddContentless(Ino parent, const std::string& name, Ino* ino, NodeAttr* attr);
  int PreserveOpenContent(Ino parent, const std::string& name);
  void KeepDetachedAttr(const std::string& path, const NodeAttr& attr);
  std::string RemotePath(const std::string& path) const;
  int RunBatch(std::vector<RemoteOp> ops) REQUIRES(ns_mu_);
  int TouchParentOp(const std::string& path, int64_t now, std::vector<RemoteOp>* ops,
                    std::vector<std::pair<std::string, NodeAttr>>* touched);
  void ApplyTouched(const std::vector<std::pair<std::string, NodeAttr>>& touched);
  int UpdateMetadata(Ino ino, const std::function<int(NodeAttr&)>& change);
  // The file's state, created from `attr` if it has none, pinned (Unpin when done).
  std::shared_ptr<FileState> PinState(Ino ino, const NodeAttr& attr);
  void Unpin(const std::shared_ptr<FileState>& st);
  std::shared_ptr<FileState> FindState(Ino ino) const;
  std::shared_ptr<Handle> HandleFor(uint64_t fh) const;
  // The size of an open or changed file as this mount's descriptors see it (its staged
  // copy, or the version it was last opened at), if it has one.
  std::optional<uint64_t> OpenSize(Ino ino) const;
  // Both require st.mu held (asserted inside: FileState is incomplete here).
  int EnsureStaged(FileState& st);
  Status ReadBase(FileState& st, uint64_t offset, std::span<uint8_t> out);
  void MarkWritten(Ino ino, uint64_t size);
  // Streaming uploads (mount/streaming_upload.h), all three with st.mu held: starts or
  // extends the file's after an append; drops it after any other change; completes it for
  // a commit (nothing when the file has none or it failed: the commit uploads the whole
  // staging file then).
  void FeedStream(FileState& st);
  void StopStream(FileState& st);
  std::optional<UploadedFile> FinishStream(FileState& st);
  // Queues the file's commit (a close after writes); writes wait until it ran.
  void QueueCommit(FileState& st);
  std::vector<Ino> CommitGroup(const std::vector<Ino>& inos);
  Result<CasClient*> WriteCas();
  // How a commit group is uploaded: groups of only small files skip the shard cache and
  // global dedup (see bucket_fs_files.cc).
  UploadOptions CommitUploadOptions(std::span<const UploadItem> items) const;
  int ToErrno(const Status& st, const char* what) const;
  int64_t NowMs() const;

  const MountOptions options_;
  RemoteConnection& conn_;
  ContentSource& content_;
  MetadataCache meta_;
  InodeTable inodes_;
  StagingDir staging_;

  Mutex ns_mu_;  // taken before mu_
  mutable Mutex mu_;
  std::unordered_map<Ino, std::shared_ptr<FileState>> files_ GUARDED_BY(mu_);
  std::unordered_map<uint64_t, std::shared_ptr<Handle>> handles_ GUARDED_BY(mu_);
  std::unordered_map<uint64_t, std::shared_ptr<DirHandle>> dir_handles_ GUARDED_BY(mu_);
  uint64_t next_fh_ GUARDED_BY(mu_) = 1;
  // The content hash each file's kernel page cache was filled from: an open keeps the
  // cache (FOPEN_KEEP_CACHE) only while it matches.
  std::unordered_map<Ino, Hash> page_cache_ GUARDED_BY(mu_);
  // Attributes of open files whose name was removed (unlink, rename over them).
  std::unordered_map<Ino, NodeAttr> detached_ GUARDED_BY(mu_);
  Mutex cas_mu_;
  std::unique_ptr<RemoteConnection::Cas> write_cas_ GUARDED_BY(cas_mu_);

  std::atomic<int> streams_{0};  // streaming uploads running

  std::unique_ptr<CommitQueue> commits_;
};

}  // namespace xet
