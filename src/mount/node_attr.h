// What the mount knows of one name in the bucket: its kind, content, POSIX attributes and
// whether it still waits to be committed. Converted from and to the bucket API's entries
// (client/hub/hub_client.h RemoteEntry / RemotePosix).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "client/hub/hub_client.h"
#include "format/hash.h"
#include "mount/mount_options.h"

namespace xet {

// kFifo, kSocket, kCharDevice and kBlockDevice are special files: entries without content
// whose I/O the kernel handles itself (the mount never sees their reads and writes).
enum class NodeKind { kFile, kDirectory, kSymlink, kFifo, kSocket, kCharDevice, kBlockDevice };

// FIFOs, sockets and device nodes.
inline bool IsSpecialKind(NodeKind kind) {
  return kind == NodeKind::kFifo || kind == NodeKind::kSocket || kind == NodeKind::kCharDevice ||
         kind == NodeKind::kBlockDevice;
}

struct NodeAttr {
  NodeKind kind = NodeKind::kFile;
  uint64_t size = 0;  // files: content bytes; symlinks: target length; special files: 0
  Hash hash;          // files: the committed content's Xet hash
  int64_t mtime_ms = 0;
  int64_t atime_ms = 0;
  int64_t ctime_ms = 0;
  uint32_t mode = 0;  // permission bits only (07777)
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string target;                                       // symlinks
  uint32_t rdev = 0;                                        // device nodes: st_rdev
  std::vector<std::pair<std::string, std::string>> xattrs;  // sorted by name
  // The entry carries POSIX metadata on the server (directories: an explicit entry).
  bool has_posix = false;
  // Written here and not yet committed: kept across listing refreshes.
  bool pending = false;
  // The server has an entry at this path (false for a file created here and not yet
  // committed: its name exists only in this mount until then).
  bool on_server = true;
  // No name refers to it any more (unlinked while open): reported with st_nlink 0.
  bool unlinked = false;
};

// The attributes of a listed entry; entries without POSIX metadata take the defaults of
// `options` (files: file_mode, directories: dir_mode, owner default_uid/default_gid).
NodeAttr AttrFromRemote(const RemoteEntry& entry, const MountOptions& options);

// The POSIX metadata to store for `attr` (mode with its type bits).
RemotePosix PosixFromAttr(const NodeAttr& attr);

// A fresh attribute for a node this mount creates.
NodeAttr NewNodeAttr(NodeKind kind, uint32_t mode, uint32_t uid, uint32_t gid, int64_t now_ms);

// st_mode type bits of a kind.
uint32_t TypeBits(NodeKind kind);

// The kind of st_mode type bits `type` (S_IFMT bits only); nullopt for none of them.
std::optional<NodeKind> KindOfType(uint32_t type);

}  // namespace xet
