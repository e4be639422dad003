// The mount's view of the bucket's names: directory listings fetched from the tree API
// (paged), kept for the metadata TTL and then revalidated by one cheap probe of the
// bucket's generation (refetched only when it changed), with this mount's own changes
// written through so they are seen at once.
//
// Local changes are also kept as an overlay per directory (name -> attributes or "gone",
// with the time of the change) and applied over any listing whose request started before
// the change, so a listing that raced with a change cannot undo it. Entries of files written
// here but not yet committed (NodeAttr::pending) stay in the overlay until their commit.
//
// Thread-safe. Network requests are made without the lock held.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "client/hub/hub_client.h"
#include "common/mutex.h"
#include "common/status.h"
#include "mount/mount_options.h"
#include "mount/node_attr.h"

namespace xet {

class MetadataCache {
 public:
  // Milliseconds of a monotonic clock (injectable for tests).
  using Clock = std::function<int64_t()>;

  // `hub` must outlive the cache.
  MetadataCache(HubClient& hub, const MountOptions& options, Clock now = {});

  // The children of directory `dir`, by name. NotFound when `dir` is not a directory;
  // the server's error (Unavailable, PermissionDenied, ...) when the listing fails.
  Status List(const std::string& dir, std::vector<std::pair<std::string, NodeAttr>>* out);
  // The attributes of `path` ("" = the mount's root), from its parent's listing.
  Status Stat(const std::string& path, NodeAttr* out);
  // Whether `dir` has no children, asked of the server (not the cache) and merged with the
  // overlay: what rmdir and a rename over a directory decide on.
  Result<bool> IsEmptyDirectory(const std::string& dir);

  // This mount's changes, applied at once (write-through).
  void Put(const std::string& path, const NodeAttr& attr);
  void Remove(const std::string& path);
  // Moves `from` and everything below it to `to` (a rename): cached listings below `from`
  // move along and are refetched on their next use.
  void Move(const std::string& from, const std::string& to);
  // Applies `fn` to the attributes of `path` if cached; returns whether it was.
  bool Update(const std::string& path, const std::function<void(NodeAttr&)>& fn);

  // The mount root's attributes (it has no entry of its own on the server).
  void SetRootAttr(const NodeAttr& attr);

  // Drops every cached listing (not the overlay): the next access asks the server.
  void InvalidateAll();

  uint64_t listings_fetched() const;
  uint64_t generation_probes() const;

 private:
  struct Change {
    std::optional<NodeAttr> attr;  // nullopt: removed
    int64_t at_ms = 0;
  };
  struct Dir {
    bool valid = false;       // children hold a listing
    int64_t checked_ms = 0;   // when the listing was last known current
    uint64_t generation = 0;  // the bucket's generation when it was
    std::map<std::string, NodeAttr> children;
    std::map<std::string, Change> overlay;
  };

  // Makes sure dir's listing is current, fetching it when it is not.
  Status Refresh(const std::string& dir) EXCLUDES(mu_);
  // The bucket's generation, probed at most once per TTL (0: the server has none).
  Result<uint64_t> CurrentGeneration() EXCLUDES(mu_);
  Status Fetch(const std::string& dir, std::map<std::string, NodeAttr>* out);
  void Record(const std::string& dir, const std::string& name, std::optional<NodeAttr> attr)
      REQUIRES(mu_);
  std::string RemotePrefix(const std::string& dir) const;
  static void ApplyOverlay(Dir& d, int64_t since_ms);

  HubClient& hub_;
  const MountOptions& options_;
  Clock now_;
  NodeAttr root_attr_ GUARDED_BY(mu_);

  mutable Mutex mu_;
  std::unordered_map<std::string, Dir> dirs_ GUARDED_BY(mu_);
  int64_t probe_ms_ GUARDED_BY(mu_) = -1;
  uint64_t probe_generation_ GUARDED_BY(mu_) = 0;
  uint64_t listings_fetched_ GUARDED_BY(mu_) = 0;
  uint64_t probes_ GUARDED_BY(mu_) = 0;
};

}  // namespace xet
