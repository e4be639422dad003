#include "mount/inode_table.h"

#include <utility>
#include <vector>

#include "mount/mount_paths.h"

namespace xet {

namespace {

// The entries of `m` at `dir` and below it: `dir` itself, then "dir/...". ('/' sorts
// before every other byte that can follow in a longer name except those below it, so the
// subtree is not one contiguous range; collect by prefix scan.)
template <typename Map>
std::vector<typename Map::iterator> Subtree(Map& m, const std::string& dir) {
  std::vector<typename Map::iterator> out;
  auto it = m.lower_bound(dir);
  if (it != m.end() && it->first == dir) out.push_back(it++);
  const std::string below = dir + "/";
  for (it = m.lower_bound(below); it != m.end() && it->first.compare(0, below.size(), below) == 0;
       ++it) {
    out.push_back(it);
  }
  return out;
}

}  // namespace

InodeTable::InodeTable() {
  MutexLock lock(mu_);
  nodes_[kRootIno] = Node{std::string(), 1};
  by_path_[""] = kRootIno;
}

Ino InodeTable::Lookup(const std::string& path) {
  MutexLock lock(mu_);
  auto it = by_path_.find(path);
  if (it != by_path_.end()) {
    nodes_[it->second].lookups += 1;
    return it->second;
  }
  const Ino ino = next_++;
  nodes_[ino] = Node{path, 1};
  by_path_[path] = ino;
  return ino;
}

std::optional<Ino> InodeTable::Find(const std::string& path) const {
  MutexLock lock(mu_);
  auto it = by_path_.find(path);
  if (it == by_path_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> InodeTable::Path(Ino ino) const {
  MutexLock lock(mu_);
  auto it = nodes_.find(ino);
  if (it == nodes_.end()) return std::nullopt;
  return it->second.path;
}

bool InodeTable::Forget(Ino ino, uint64_t n) {
  if (ino == kRootIno) return false;
  MutexLock lock(mu_);
  auto it = nodes_.find(ino);
  if (it == nodes_.end()) return false;
  it->second.lookups = n >= it->second.lookups ? 0 : it->second.lookups - n;
  if (it->second.lookups > 0) return false;
  if (it->second.path) {
    auto p = by_path_.find(*it->second.path);
    if (p != by_path_.end() && p->second == ino) by_path_.erase(p);
  }
  nodes_.erase(it);
  return true;
}

void InodeTable::DetachLocked(const std::string& path) {
  for (auto it : Subtree(by_path_, path)) {
    nodes_[it->second].path.reset();
    by_path_.erase(it);
  }
}

void InodeTable::Detach(const std::string& path) {
  if (path.empty()) return;
  MutexLock lock(mu_);
  DetachLocked(path);
}

void InodeTable::Rename(const std::string& from, const std::string& to) {
  MutexLock lock(mu_);
  DetachLocked(to);
  std::vector<std::pair<std::string, Ino>> moved;
  for (auto it : Subtree(by_path_, from)) {
    moved.emplace_back(Rebase(it->first, from, to), it->second);
    by_path_.erase(it);
  }
  for (auto& [path, ino] : moved) {
    nodes_[ino].path = path;
    by_path_[path] = ino;
  }
}

size_t InodeTable::size() const {
  MutexLock lock(mu_);
  return nodes_.size();
}

}  // namespace xet
