#include "mount/node_attr.h"

#include <sys/stat.h>

namespace xet {

uint32_t TypeBits(NodeKind kind) {
  switch (kind) {
    case NodeKind::kDirectory:
      return S_IFDIR;
    case NodeKind::kSymlink:
      return S_IFLNK;
    case NodeKind::kFifo:
      return S_IFIFO;
    case NodeKind::kSocket:
      return S_IFSOCK;
    case NodeKind::kCharDevice:
      return S_IFCHR;
    case NodeKind::kBlockDevice:
      return S_IFBLK;
    case NodeKind::kFile:
      break;
  }
  return S_IFREG;
}

std::optional<NodeKind> KindOfType(uint32_t type) {
  switch (type) {
    case S_IFREG:
      return NodeKind::kFile;
    case S_IFDIR:
      return NodeKind::kDirectory;
    case S_IFLNK:
      return NodeKind::kSymlink;
    case S_IFIFO:
      return NodeKind::kFifo;
    case S_IFSOCK:
      return NodeKind::kSocket;
    case S_IFCHR:
      return NodeKind::kCharDevice;
    case S_IFBLK:
      return NodeKind::kBlockDevice;
    default:
      return std::nullopt;
  }
}

NodeAttr AttrFromRemote(const RemoteEntry& entry, const MountOptions& options) {
  NodeAttr a;
  a.kind = entry.is_directory ? NodeKind::kDirectory : NodeKind::kFile;
  a.size = entry.is_directory ? 0 : entry.size;
  a.hash = entry.xet_hash;
  a.mtime_ms = entry.mtime_ms;
  a.uid = options.default_uid;
  a.gid = options.default_gid;
  a.mode = entry.is_directory ? options.dir_mode : options.file_mode;
  if (entry.posix) {
    const RemotePosix& p = *entry.posix;
    a.has_posix = true;
    if ((p.mode & S_IFMT) == S_IFLNK && !entry.is_directory) {
      a.kind = NodeKind::kSymlink;
      a.target = p.target;
      a.size = p.target.size();
    } else if (auto kind = KindOfType(p.mode & S_IFMT);
               kind && IsSpecialKind(*kind) && !entry.is_directory) {
      // A special file (its entry is the empty file: protocol/posix_metadata.h).
      a.kind = *kind;
      a.size = 0;
      a.rdev = p.rdev;
    }
    a.mode = p.mode & 07777;
    a.uid = p.uid;
    a.gid = p.gid;
    a.atime_ms = p.atime_ms;
    a.xattrs = p.xattrs;
  }
  if (a.atime_ms == 0) a.atime_ms = a.mtime_ms;
  a.ctime_ms = a.mtime_ms;
  return a;
}

RemotePosix PosixFromAttr(const NodeAttr& attr) {
  RemotePosix p;
  p.mode = TypeBits(attr.kind) | (attr.mode & 07777);
  p.uid = attr.uid;
  p.gid = attr.gid;
  p.atime_ms = attr.atime_ms;
  if (attr.kind == NodeKind::kSymlink) p.target = attr.target;
  if (attr.kind == NodeKind::kCharDevice || attr.kind == NodeKind::kBlockDevice) {
    p.rdev = attr.rdev;
  }
  p.xattrs = attr.xattrs;
  return p;
}

NodeAttr NewNodeAttr(NodeKind kind, uint32_t mode, uint32_t uid, uint32_t gid, int64_t now_ms) {
  NodeAttr a;
  a.kind = kind;
  a.mode = mode & 07777;
  a.uid = uid;
  a.gid = gid;
  a.mtime_ms = a.atime_ms = a.ctime_ms = now_ms;
  a.has_posix = true;
  return a;
}

}  // namespace xet
