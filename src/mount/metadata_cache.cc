#include "mount/metadata_cache.h"

#include <chrono>

#include "mount/mount_paths.h"

namespace xet {

namespace {

// Items per tree page: the server's maximum, so a directory of 100,000 entries is 10
// requests.
constexpr size_t kListingPageItems = 10'000;

int64_t SteadyMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

MetadataCache::MetadataCache(HubClient& hub, const MountOptions& options, Clock now)
    : hub_(hub), options_(options), now_(now ? std::move(now) : Clock(SteadyMillis)) {
  MutexLock lock(mu_);
  root_attr_.kind = NodeKind::kDirectory;
  root_attr_.mode = options.dir_mode;
  root_attr_.uid = options.default_uid;
  root_attr_.gid = options.default_gid;
}

std::string MetadataCache::RemotePrefix(const std::string& dir) const {
  if (options_.prefix.empty()) return dir;
  return dir.empty() ? options_.prefix : options_.prefix + "/" + dir;
}

Status MetadataCache::Fetch(const std::string& dir, std::map<std::string, NodeAttr>* out) {
  const std::string prefix = RemotePrefix(dir);
  const size_t strip = prefix.empty() ? 0 : prefix.size() + 1;
  Status st = hub_.ListTree(
      options_.bucket_id, prefix, /*recursive=*/false,
      [&](const RemoteEntry& e) {
        if (e.path.size() <= strip) return true;
        std::string name = e.path.substr(strip);
        if (name.find('/') != std::string::npos) return true;
        NodeAttr attr = AttrFromRemote(e, options_);
        auto [it, inserted] = out->emplace(std::move(name), attr);
        // A directory listed both implied and explicit: keep the one with metadata.
        if (!inserted && attr.has_posix) it->second = std::move(attr);
        return true;
      },
      kListingPageItems);
  // A prefix with nothing below it may be answered 404: an empty directory listing.
  if (st.code() == Status::Code::kNotFound && !dir.empty()) return Status::Ok();
  return st;
}

Result<uint64_t> MetadataCache::CurrentGeneration() {
  const int64_t now = now_();
  {
    MutexLock lock(mu_);
    if (probe_ms_ >= 0 && now - probe_ms_ < options_.metadata_ttl_ms) return probe_generation_;
  }
  XET_ASSIGN_OR_RETURN(RemoteBucket b, hub_.GetBucket(options_.bucket_id));
  MutexLock lock(mu_);
  probe_ms_ = now;
  probe_generation_ = b.generation;
  probes_ += 1;
  return b.generation;
}

void MetadataCache::ApplyOverlay(Dir& d, int64_t since_ms) {
  for (auto it = d.overlay.begin(); it != d.overlay.end();) {
    const Change& c = it->second;
    const bool pending = c.attr && c.attr->pending;
    if (!pending && c.at_ms < since_ms) {
      it = d.overlay.erase(it);  // the fetched listing already reflects it
      continue;
    }
    if (c.attr) {
      d.children[it->first] = *c.attr;
    } else {
      d.children.erase(it->first);
    }
    ++it;
  }
}

Status MetadataCache::Refresh(const std::string& dir) {
  const int64_t now = now_();
  uint64_t known_generation = 0;
  {
    MutexLock lock(mu_);
    auto it = dirs_.find(dir);
    if (it != dirs_.end() && it->second.valid) {
      if (now - it->second.checked_ms < options_.metadata_ttl_ms) return Status::Ok();
      known_generation = it->second.generation;
    }
  }
  XET_ASSIGN_OR_RETURN(uint64_t generation, CurrentGeneration());
  if (known_generation != 0 && generation == known_generation) {
    MutexLock lock(mu_);
    dirs_[dir].checked_ms = now;
    return Status::Ok();
  }
  const int64_t started = now_();
  std::map<std::string, NodeAttr> children;
  XET_RETURN_IF_ERROR(Fetch(dir, &children));
  MutexLock lock(mu_);
  listings_fetched_ += 1;
  Dir& d = dirs_[dir];
  // The server keeps no ctime (a listed entry's is its mtime): an entry that did not change
  // since this mount knew it keeps the later ctime this mount gave it (chmod, chown, ...).
  for (auto& [name, attr] : children) {
    auto old = d.children.find(name);
    if (old != d.children.end() && old->second.kind == attr.kind &&
        old->second.mtime_ms == attr.mtime_ms && old->second.ctime_ms > attr.ctime_ms) {
      attr.ctime_ms = old->second.ctime_ms;
    }
  }
  d.children = std::move(children);
  d.valid = true;
  d.checked_ms = started;
  d.generation = generation;
  ApplyOverlay(d, started);
  return Status::Ok();
}

Status MetadataCache::List(const std::string& dir,
                           std::vector<std::pair<std::string, NodeAttr>>* out) {
  XET_RETURN_IF_ERROR(Refresh(dir));
  MutexLock lock(mu_);
  const Dir& d = dirs_[dir];
  out->assign(d.children.begin(), d.children.end());
  return Status::Ok();
}

Status MetadataCache::Stat(const std::string& path, NodeAttr* out) {
  if (path.empty()) {
    MutexLock lock(mu_);
    *out = root_attr_;
    return Status::Ok();
  }
  const std::string parent = ParentPath(path);
  XET_RETURN_IF_ERROR(Refresh(parent));
  MutexLock lock(mu_);
  const Dir& d = dirs_[parent];
  auto it = d.children.find(BaseName(path));
  if (it == d.children.end()) return Status::NotFound(path);
  *out = it->second;
  return Status::Ok();
}

Result<bool> MetadataCache::IsEmptyDirectory(const std::string& dir) {
  std::map<std::string, NodeAttr> children;
  const int64_t started = now_();
  XET_RETURN_IF_ERROR(Fetch(dir, &children));
  MutexLock lock(mu_);
  auto it = dirs_.find(dir);
  if (it != dirs_.end()) {
    Dir merged;
    merged.children = std::move(children);
    merged.overlay = it->second.overlay;
    ApplyOverlay(merged, started);
    return merged.children.empty();
  }
  return children.empty();
}

void MetadataCache::Record(const std::string& dir, const std::string& name,
                           std::optional<NodeAttr> attr) {
  Dir& d = dirs_[dir];
  if (attr) {
    d.children[name] = *attr;
  } else {
    d.children.erase(name);
  }
  d.overlay[name] = Change{std::move(attr), now_()};
}

void MetadataCache::Put(const std::string& path, const NodeAttr& attr) {
  MutexLock lock(mu_);
  Record(ParentPath(path), BaseName(path), attr);
  if (attr.kind == NodeKind::kDirectory) {
    Dir& d = dirs_[path];
    if (!d.valid) {
      d.valid = true;  // a new directory: empty until something is put into it
      d.checked_ms = now_();
      d.generation = 0;
    }
  }
}

void MetadataCache::Remove(const std::string& path) {
  MutexLock lock(mu_);
  Record(ParentPath(path), BaseName(path), std::nullopt);
  for (auto it = dirs_.begin(); it != dirs_.end();) {
    it = IsWithin(it->first, path) && !path.empty() ? dirs_.erase(it) : std::next(it);
  }
}

void MetadataCache::Move(const std::string& from, const std::string& to) {
  MutexLock lock(mu_);
  std::optional<NodeAttr> moved;
  {
    Dir& src = dirs_[ParentPath(from)];
    auto it = src.children.find(BaseName(from));
    if (it != src.children.end()) moved = it->second;
  }
  Record(ParentPath(from), BaseName(from), std::nullopt);
  if (moved) Record(ParentPath(to), BaseName(to), *moved);
  // Listings below the target are replaced; those below the source move (with their
  // overlays: files still waiting for their commit) and are refetched on next use.
  for (auto it = dirs_.begin(); it != dirs_.end();) {
    it = IsWithin(it->first, to) ? dirs_.erase(it) : std::next(it);
  }
  std::vector<std::pair<std::string, Dir>> moved_dirs;
  for (auto it = dirs_.begin(); it != dirs_.end();) {
    if (IsWithin(it->first, from)) {
      moved_dirs.emplace_back(Rebase(it->first, from, to), std::move(it->second));
      it = dirs_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& [path, d] : moved_dirs) {
    d.checked_ms = 0;
    d.generation = 0;
    dirs_[path] = std::move(d);
  }
}

bool MetadataCache::Update(const std::string& path, const std::function<void(NodeAttr&)>& fn) {
  MutexLock lock(mu_);
  auto it = dirs_.find(ParentPath(path));
  if (it == dirs_.end()) return false;
  auto child = it->second.children.find(BaseName(path));
  if (child == it->second.children.end()) return false;
  fn(child->second);
  it->second.overlay[child->first] = Change{child->second, now_()};
  return true;
}

void MetadataCache::SetRootAttr(const NodeAttr& attr) {
  MutexLock lock(mu_);
  root_attr_ = attr;
  root_attr_.kind = NodeKind::kDirectory;
}

void MetadataCache::InvalidateAll() {
  MutexLock lock(mu_);
  for (auto& [path, d] : dirs_) {
    d.checked_ms = 0;
    d.generation = 0;
  }
  probe_ms_ = -1;
}

uint64_t MetadataCache::listings_fetched() const {
  MutexLock lock(mu_);
  return listings_fetched_;
}

uint64_t MetadataCache::generation_probes() const {
  MutexLock lock(mu_);
  return probes_;
}

}  // namespace xet
