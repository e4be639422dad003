// Inode numbers for the paths the kernel knows, with the kernel's lookup counts (FUSE's
// lookup/forget protocol). Inode 1 is the mount's root. A renamed directory takes every
// inode below it along; an unlinked (or replaced) node keeps its number, detached from any
// path, until the kernel forgets it, so open files stay usable after unlink.
//
// Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "common/mutex.h"

namespace xet {

using Ino = uint64_t;
inline constexpr Ino kRootIno = 1;

class InodeTable {
 public:
  InodeTable();

  // The inode of `path`, created if new; counts one kernel lookup.
  Ino Lookup(const std::string& path);
  // The inode of `path` if it has one (no lookup counted).
  std::optional<Ino> Find(const std::string& path) const;
  // The path of `ino`; nullopt when unknown or detached (unlinked).
  std::optional<std::string> Path(Ino ino) const;
  // Drops `n` kernel lookups; the inode is freed when none remain. True when this call
  // freed it.
  bool Forget(Ino ino, uint64_t n);
  // Detaches the inode at `path` and every one below it (unlink, rmdir, replaced by a
  // rename).
  void Detach(const std::string& path);
  // Moves the inodes at and below `from` to `to` (what was at `to` is detached first).
  void Rename(const std::string& from, const std::string& to);
  size_t size() const;

 private:
  struct Node {
    std::optional<std::string> path;  // nullopt: detached
    uint64_t lookups = 0;
  };
  void DetachLocked(const std::string& path) REQUIRES(mu_);

  mutable Mutex mu_;
  std::unordered_map<Ino, Node> nodes_ GUARDED_BY(mu_);
  std::map<std::string, Ino> by_path_ GUARDED_BY(mu_);  // ordered: subtrees are ranges
  Ino next_ GUARDED_BY(mu_) = kRootIno + 1;
};

}  // namespace xet
