// Serves a BucketFs to the kernel through libfuse3's low-level API: mounts the file system
// (`default_permissions`: the kernel checks access against the mode, owner and group the
// file system reports), runs the multi-threaded request loop, and unmounts.
#pragma once

#include <memory>
#include <string>

#include "common/result.h"
#include "mount/mount_options.h"

struct fuse_session;

namespace xet {

class BucketFs;

class FuseMount {
 public:
  // Mounts at options.mountpoint; the file system is attached later (Serve), so the
  // process may daemonize in between. Unavailable when /dev/fuse cannot be opened or the
  // mount is refused (the message says what to check).
  static Result<std::unique_ptr<FuseMount>> Mount(const MountOptions& options);
  ~FuseMount();  // unmounts if still mounted
  FuseMount(const FuseMount&) = delete;
  FuseMount& operator=(const FuseMount&) = delete;

  // Continues in the background: the calling process exits 0 and a detached child (no
  // terminal, working directory /) returns. Call before starting any thread.
  Status Daemonize();

  // Serves `fs` until the file system is unmounted (`xetstore unmount`, umount, fusermount3
  // -u) or SIGINT/SIGTERM/SIGHUP arrive; then unmounts.
  Status Serve(BucketFs& fs);

  struct Attached;  // the session's userdata (fuse_mount.cc)

 private:
  FuseMount(fuse_session* session, const MountOptions& options);

  fuse_session* session_;
  std::unique_ptr<Attached> attached_;
  MountOptions options_;
  bool mounted_ = true;
};

}  // namespace xet
