// libfuse3 low-level glue: each kernel request is decoded, handed to BucketFs, and
// answered. Nothing here decides file-system semantics.
#define FUSE_USE_VERSION 312
#include "mount/fuse_mount.h"

#include <fuse_lowlevel.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/huge_pages.h"
#include "mount/bucket_fs.h"

namespace xet {

// The session's userdata: the file system, attached when serving starts.
struct FuseMount::Attached {
  BucketFs* fs = nullptr;
};

namespace {

using Attached = FuseMount::Attached;

BucketFs& Fs(fuse_req_t req) { return *static_cast<Attached*>(fuse_req_userdata(req))->fs; }

FsCaller Caller(fuse_req_t req) {
  const fuse_ctx* ctx = fuse_req_ctx(req);
  return FsCaller{ctx->uid, ctx->gid};
}

timespec ToTimespec(int64_t ms) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(ms / 1000);
  ts.tv_nsec = static_cast<long>((ms % 1000) * 1'000'000);
  return ts;
}

int64_t ToMillis(const timespec& ts) {
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

struct stat ToStat(Ino ino, const NodeAttr& a) {
  struct stat st {};
  st.st_ino = ino;
  st.st_mode = TypeBits(a.kind) | (a.mode & 07777);
  st.st_nlink = a.unlinked ? 0 : a.kind == NodeKind::kDirectory ? 2 : 1;
  st.st_uid = a.uid;
  st.st_gid = a.gid;
  st.st_rdev = a.rdev;
  st.st_size = static_cast<off_t>(a.size);
  st.st_blksize = 1 << 20;
  st.st_blocks = static_cast<blkcnt_t>((a.size + 511) / 512);
  st.st_mtim = ToTimespec(a.mtime_ms);
  st.st_atim = ToTimespec(a.atime_ms);
  st.st_ctim = ToTimespec(a.ctime_ms);
  return st;
}

double TtlSeconds(fuse_req_t req) {
  return static_cast<double>(Fs(req).options().metadata_ttl_ms) / 1000.0;
}

// How long the kernel may keep a node's attributes. Not at all for files: their size must
// be asked again at each open, or an open after another client's change would read the new
// content cut to the old size (the mount's own metadata cache still answers within its TTL).
double AttrSeconds(fuse_req_t req, const NodeAttr& attr) {
  return attr.kind == NodeKind::kFile ? 0.0 : TtlSeconds(req);
}

void ReplyEntry(fuse_req_t req, Ino ino, const NodeAttr& attr) {
  fuse_entry_param e{};
  e.ino = ino;
  e.generation = 1;
  e.attr = ToStat(ino, attr);
  e.attr_timeout = AttrSeconds(req, attr);
  e.entry_timeout = TtlSeconds(req);
  fuse_reply_entry(req, &e);
}

void OnInit(void* userdata, fuse_conn_info* conn) {
  (void)userdata;
  conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
  if (conn->capable & FUSE_CAP_PARALLEL_DIROPS) conn->want |= FUSE_CAP_PARALLEL_DIROPS;
  if (conn->capable & FUSE_CAP_AUTO_INVAL_DATA) conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
  conn->want &= ~static_cast<unsigned>(FUSE_CAP_WRITEBACK_CACHE);
  conn->max_write = 1 << 20;
  conn->max_readahead = 16 << 20;
  conn->max_background = 64;
  conn->congestion_threshold = 48;
}

void OnDestroy(void* userdata) {
  if (BucketFs* fs = static_cast<Attached*>(userdata)->fs) fs->Shutdown();
}

void OnLookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  Ino ino = 0;
  NodeAttr attr;
  if (int err = Fs(req).Lookup(parent, name, &ino, &attr); err != 0) {
    if (err == ENOENT) {
      // A negative entry the kernel keeps for the TTL.
      fuse_entry_param e{};
      e.entry_timeout = TtlSeconds(req);
      fuse_reply_entry(req, &e);
      return;
    }
    fuse_reply_err(req, err);
    return;
  }
  ReplyEntry(req, ino, attr);
}

void OnForget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  Fs(req).Forget(ino, nlookup);
  fuse_reply_none(req);
}

void OnForgetMulti(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
  for (size_t i = 0; i < count; ++i) Fs(req).Forget(forgets[i].ino, forgets[i].nlookup);
  fuse_reply_none(req);
}

void OnGetattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  NodeAttr attr;
  if (int err = Fs(req).GetAttr(ino, &attr); err != 0) {
    fuse_reply_err(req, err);
    return;
  }
  struct stat st = ToStat(ino, attr);
  fuse_reply_attr(req, &st, AttrSeconds(req, attr));
}

void OnSetattr(fuse_req_t req, fuse_ino_t ino, struct stat* in, int to_set, fuse_file_info* fi) {
  SetAttrRequest r;
  if (to_set & FUSE_SET_ATTR_MODE) r.mode = in->st_mode & 07777;
  if (to_set & FUSE_SET_ATTR_UID) r.uid = in->st_uid;
  if (to_set & FUSE_SET_ATTR_GID) r.gid = in->st_gid;
  if (to_set & FUSE_SET_ATTR_SIZE) r.size = static_cast<uint64_t>(in->st_size);
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  if (to_set & FUSE_SET_ATTR_ATIME_NOW) {
    r.atime_ms = ToMillis(now);
  } else if (to_set & FUSE_SET_ATTR_ATIME) {
    r.atime_ms = ToMillis(in->st_atim);
  }
  if (to_set & FUSE_SET_ATTR_MTIME_NOW) {
    r.mtime_ms = ToMillis(now);
  } else if (to_set & FUSE_SET_ATTR_MTIME) {
    r.mtime_ms = ToMillis(in->st_mtim);
  }
  if (fi != nullptr) r.fh = fi->fh;
  NodeAttr attr;
  if (int err = Fs(req).SetAttr(ino, r, Caller(req), &attr); err != 0) {
    fuse_reply_err(req, err);
    return;
  }
  struct stat st = ToStat(ino, attr);
  fuse_reply_attr(req, &st, AttrSeconds(req, attr));
}

void OnReadlink(fuse_req_t req, fuse_ino_t ino) {
  std::string target;
  if (int err = Fs(req).ReadLink(ino, &target); err != 0) {
    fuse_reply_err(req, err);
    return;
  }
  fuse_reply_readlink(req, target.c_str());
}

void OnMkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  Ino ino = 0;
  NodeAttr attr;
  const mode_t umask = fuse_req_ctx(req)->umask;
  if (int err = Fs(req).MkDir(parent, name, mode & ~umask, Caller(req), &ino, &attr); err != 0) {
    fuse_reply_err(req, err);
    return;
  }
  ReplyEntry(req, ino, attr);
}

void OnSymlink(fuse_req_t req, const char* link, fuse_ino_t parent, const char* name) {
  Ino ino = 0;
  NodeAttr attr;
  if (int err = Fs(req).Symlink(link, parent, name, Caller(req), &ino, &attr); err != 0) {
    fuse_reply_err(req, err);
    return;
  }
  ReplyEntry(req, ino, attr);
}

void OnUnlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  fuse_reply_err(req, Fs(req).Unlink(parent, name));
}

void OnRmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
  fuse_reply_err(req, Fs(req).RmDir(parent, name));
}

void OnRename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent,
              const char* newname, unsigned int flags) {
  fuse_reply_err(req, Fs(req).Rename(parent, name, newparent, newname, flags));
}

void OnLink(fuse_req_t req, fuse_ino_t, fuse_ino_t, const char*) { fuse_reply_err(req, EPERM); }

// mkfifo, mknod and bind(2) of a socket (the kernel checks CAP_MKNOD for device nodes
// before asking, and handles every open of a FIFO, socket or device node itself).
void OnMknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev) {
  Ino ino = 0;
  NodeAttr attr;
  const mode_t umask = fuse_req_ctx(req)->umask;
  if (int err = Fs(req).MkNod(parent, name, mode & ~umask, rdev, Caller(req), &ino, &attr);
      err != 0) {
    fuse_reply_err(req, err);
    return;
  }
  ReplyEntry(req, ino, attr);
}

void OnOpen(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  uint64_t fh = 0;
  bool keep_cache = false;
  if (int err = Fs(req).Open(ino, fi->flags, &fh, &keep_cache); err != 0) {
    fuse_reply_err(req, err);
    return;
  }
  fi->fh = fh;
  fi->keep_cache = keep_cache ? 1 : 0;
  fi->direct_io = Fs(req).HandleBypassesPageCache(fh) ? 1 : 0;
  fuse_reply_open(req, fi);
}

void OnCreate(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode,
              fuse_file_info* fi) {
  Ino ino = 0;
  NodeAttr attr;
  uint64_t fh = 0;
  const mode_t umask = fuse_req_ctx(req)->umask;
  if (int err =
          Fs(req).Create(parent, name, mode & ~umask, fi->flags, Caller(req), &ino, &attr, &fh);
      err != 0) {
    fuse_reply_err(req, err);
    return;
  }
  fi->fh = fh;
  fi->direct_io = Fs(req).HandleBypassesPageCache(fh) ? 1 : 0;
  fuse_entry_param e{};
  e.ino = ino;
  e.generation = 1;
  e.attr = ToStat(ino, attr);
  e.attr_timeout = AttrSeconds(req, attr);
  e.entry_timeout = TtlSeconds(req);
  fuse_reply_create(req, &e, fi);
}

void OnRead(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info* fi) {
  // Each worker thread's reply buffer, in its own huge-page mapping: the threads stay for the
  // mount's life (idle threads = max threads), and a fresh 1 MiB buffer faulted in 4 KiB
  // pages was a tenth of the faults of a cold sequential read.
  thread_local PageAlignedBuffer buf;
  if (buf.size() < size) buf = PageAlignedBuffer(size);
  if (buf.data() == nullptr) {
    fuse_reply_err(req, ENOMEM);
    return;
  }
  size_t n = 0;
  if (int err = Fs(req).Read(fi->fh, static_cast<uint64_t>(off), {buf.data(), size}, &n);
      err != 0) {
    fuse_reply_err(req, err);
    return;
  }
  fuse_reply_buf(req, reinterpret_cast<const char*>(buf.data()), n);
}

void OnWrite(fuse_req_t req, fuse_ino_t, const char* data, size_t size, off_t off,
             fuse_file_info* fi) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(data);
  if (int err = Fs(req).Write(fi->fh, static_cast<uint64_t>(off), {bytes, size}); err != 0) {
    fuse_reply_err(req, err);
    return;
  }
  fuse_reply_write(req, size);
}

void OnFlush(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  fuse_reply_err(req, Fs(req).Flush(fi->fh));
}

void OnRelease(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  Fs(req).Release(fi->fh);
  fuse_reply_err(req, 0);
}

void OnFsync(fuse_req_t req, fuse_ino_t, int, fuse_file_info* fi) {
  fuse_reply_err(req, Fs(req).Fsync(fi->fh));
}

void OnFallocate(fuse_req_t req, fuse_ino_t, int mode, off_t offset, off_t length,
                 fuse_file_info* fi) {
  fuse_reply_err(req, Fs(req).Fallocate(fi->fh, mode, static_cast<uint64_t>(offset),
                                        static_cast<uint64_t>(length)));
}

void OnOpendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  uint64_t fh = 0;
  if (int err = Fs(req).OpenDir(ino, &fh); err != 0) {
    fuse_reply_err(req, err);
    return;
  }
  fi->fh = fh;
  fuse_reply_open(req, fi);
}

void OnReaddir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  const std::vector<DirEntry>* entries = Fs(req).DirEntries(fi->fh);
  if (entries == nullptr) {
    fuse_reply_err(req, EBADF);
    return;
  }
  std::vector<char> buf(size);
  size_t used = 0;
  // Offsets: 1 = ".", 2 = "..", 3 + i = entries[i].
  for (auto i = static_cast<size_t>(off); i < entries->size() + 2; ++i) {
    struct stat st {};
    const char* name = nullptr;
    if (i == 0) {
      name = ".";
      st.st_ino = ino;
      st.st_mode = S_IFDIR;
    } else if (i == 1) {
      name = "..";
      st.st_ino = kRootIno;  // not looked up by the kernel; any valid number does
      st.st_mode = S_IFDIR;
    } else {
      const DirEntry& e = (*entries)[i - 2];
      name = e.name.c_str();
      st.st_ino = e.ino != 0 ? e.ino : 0xffffffffu;
      st.st_mode = TypeBits(e.kind);
    }
    const size_t need = fuse_add_direntry(req, buf.data() + used, size - used, name, &st,
                                          static_cast<off_t>(i + 1));
    if (need > size - used) break;
    used += need;
  }
  fuse_reply_buf(req, buf.data(), used);
}

void OnReleasedir(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  Fs(req).ReleaseDir(fi->fh);
  fuse_reply_err(req, 0);
}

void OnFsyncdir(fuse_req_t req, fuse_ino_t, int, fuse_file_info*) {
  fuse_reply_err(req, Fs(req).SyncAll());
}

void OnStatfs(fuse_req_t req, fuse_ino_t) {
  struct statvfs st {};
  st.f_bsize = 1 << 20;
  st.f_frsize = 4096;
  st.f_blocks = st.f_bfree = st.f_bavail = 1ull << 40;
  st.f_files = st.f_ffree = st.f_favail = 1ull << 32;
  st.f_namemax = 255;
  fuse_reply_statfs(req, &st);
}

void OnSetxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size,
                int flags) {
  fuse_reply_err(req, Fs(req).SetXattr(ino, name, std::string_view(value, size), flags));
}

void OnGetxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  std::string value;
  if (int err = Fs(req).GetXattr(ino, name, &value); err != 0) {
    fuse_reply_err(req, err);
    return;
  }
  if (size == 0) {
    fuse_reply_xattr(req, value.size());
  } else if (size < value.size()) {
    fuse_reply_err(req, ERANGE);
  } else {
    fuse_reply_buf(req, value.data(), value.size());
  }
}

void OnListxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  std::vector<std::string> names;
  if (int err = Fs(req).ListXattr(ino, &names); err != 0) {
    fuse_reply_err(req, err);
    return;
  }
  std::string list;
  for (const auto& n : names) {
    list += n;
    list += '\0';
  }
  if (size == 0) {
    fuse_reply_xattr(req, list.size());
  } else if (size < list.size()) {
    fuse_reply_err(req, ERANGE);
  } else {
    fuse_reply_buf(req, list.data(), list.size());
  }
}

void OnRemovexattr(fuse_req_t req, fuse_ino_t ino, const char* name) {
  fuse_reply_err(req, Fs(req).RemoveXattr(ino, name));
}

fuse_lowlevel_ops MakeOps() {
  fuse_lowlevel_ops ops{};
  ops.init = OnInit;
  ops.destroy = OnDestroy;
  ops.lookup = OnLookup;
  ops.forget = OnForget;
  ops.forget_multi = OnForgetMulti;
  ops.getattr = OnGetattr;
  ops.setattr = OnSetattr;
  ops.readlink = OnReadlink;
  ops.mknod = OnMknod;
  ops.mkdir = OnMkdir;
  ops.unlink = OnUnlink;
  ops.rmdir = OnRmdir;
  ops.symlink = OnSymlink;
  ops.rename = OnRename;
  ops.link = OnLink;
  ops.open = OnOpen;
  ops.read = OnRead;
  ops.write = OnWrite;
  ops.flush = OnFlush;
  ops.release = OnRelease;
  ops.fsync = OnFsync;
  ops.opendir = OnOpendir;
  ops.readdir = OnReaddir;
  ops.releasedir = OnReleasedir;
  ops.fsyncdir = OnFsyncdir;
  ops.statfs = OnStatfs;
  ops.setxattr = OnSetxattr;
  ops.getxattr = OnGetxattr;
  ops.listxattr = OnListxattr;
  ops.removexattr = OnRemovexattr;
  ops.create = OnCreate;
  ops.fallocate = OnFallocate;
  return ops;
}

// The kernel reads ahead at most the backing device's read_ahead_kb, whatever the file
// system asks; raise it for the mount (best effort: needs root and sysfs). The device
// number comes from /proc/self/mountinfo: a stat() of the mount point would wait for the
// request loop, which is not running yet.
void RaiseReadahead(const std::string& mountpoint) {
  std::ifstream info("/proc/self/mountinfo");
  std::string line;
  std::string device;
  while (std::getline(info, line)) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, point;
    if (fields >> id >> parent >> dev >> root >> point && point == mountpoint) device = dev;
  }
  if (device.empty()) return;
  std::ofstream out("/sys/class/bdi/" + device + "/read_ahead_kb");
  if (out) out << (16 << 10) << "\n";
}

}  // namespace

Result<std::unique_ptr<FuseMount>> FuseMount::Mount(const MountOptions& options) {
  std::vector<std::string> args = {"xetstore",
                                   "-o",
                                   "default_permissions",
                                   "-o",
                                   "fsname=xetstore:" + options.bucket_id,
                                   "-o",
                                   "subtype=xetstore"};
  if (options.allow_other) args.insert(args.end(), {"-o", "allow_other"});
  if (options.read_only) args.insert(args.end(), {"-o", "ro"});
  if (options.debug) args.push_back("-d");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  fuse_args fargs = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());
  static const fuse_lowlevel_ops ops = MakeOps();
  auto attached = std::make_unique<Attached>();
  fuse_session* se = fuse_session_new(&fargs, &ops, sizeof(ops), attached.get());
  if (se == nullptr) return Status::Internal("could not create the FUSE session");
  if (fuse_session_mount(se, options.mountpoint.c_str()) != 0) {
    fuse_session_destroy(se);
    return Status::Unavailable("could not mount at " + options.mountpoint +
                               ": is /dev/fuse there (modprobe fuse; apt-get install fuse3) and "
                               "the directory empty and yours?");
  }
  RaiseReadahead(options.mountpoint);
  auto mount = std::unique_ptr<FuseMount>(new FuseMount(se, options));
  mount->attached_ = std::move(attached);
  return mount;
}

FuseMount::FuseMount(fuse_session* session, const MountOptions& options)
    : session_(session), options_(options) {}

FuseMount::~FuseMount() {
  if (mounted_) fuse_session_unmount(session_);
  fuse_session_destroy(session_);
}

Status FuseMount::Daemonize() {
  if (fuse_daemonize(/*foreground=*/0) != 0) {
    return Status::Internal("could not continue in the background");
  }
  return Status::Ok();
}

Status FuseMount::Serve(BucketFs& fs) {
  // The session was created before the file system existed (so the process could
  // daemonize in between).
  attached_->fs = &fs;
  if (fuse_set_signal_handlers(session_) != 0) {
    return Status::Internal("could not install signal handlers");
  }
  fuse_loop_config* config = fuse_loop_cfg_create();
  fuse_loop_cfg_set_max_threads(config, 16);
  // As many idle threads as threads: a worker, once started, stays (with its read buffer).
  fuse_loop_cfg_set_idle_threads(config, 16);
  const int rc = fuse_session_loop_mt(session_, config);
  fuse_loop_cfg_destroy(config);
  fuse_remove_signal_handlers(session_);
  fs.Shutdown();
  fuse_session_unmount(session_);
  mounted_ = false;
  if (rc != 0 && rc != SIGINT && rc != SIGTERM && rc != SIGHUP) {
    return Status::Internal("the FUSE request loop failed (" + std::to_string(rc) + ")");
  }
  return Status::Ok();
}

}  // namespace xet
