// LocalObjectStore: the ObjectStore contract over a local directory.
//
// Layout: the object for key K is the file <root>/K, so a key that is a directory of other
// keys cannot hold an object (Put: InvalidArgument). Put writes a uniquely named temporary
// file ".tmp-<name>-<nonce>" beside the final name (O_CREAT|O_EXCL; a dot-name, which no
// valid key can have), writes it fully, fsyncs it, then link()s it to the final name (link
// never replaces an existing name, so a finished object is never overwritten), unlinks the
// temporary name and fsyncs the directory (concurrent Puts into one directory share that
// fsync: one that starts after a Put's link covers it; see FsyncGroup). Directories created
// on the way are fsynced into their parents before the first object in them is reported
// durable. Objects of 1 MiB or more are written with O_DIRECT (through an aligned bounce
// buffer; buffered where the file system refuses it): the page-cache copy of a fresh object
// costs more CPU than it saves. Opening the store removes temporary files a crash left
// behind.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/mutex.h"
#include "common/result.h"
#include "store/local/fsync_group.h"
#include "store/object_store.h"

namespace xet {

// Fills `out` with the bytes of an object starting at `offset`; an error stops the copy.
using ObjectPieceReader = std::function<Status(uint64_t offset, std::span<uint8_t> out)>;

class LocalObjectStore final : public ObjectStore {
 public:
  // Creates `root` if missing and removes leftover temporary files under it.
  static Result<std::unique_ptr<LocalObjectStore>> Open(const std::string& root);

  Result<bool> Put(std::string_view key, std::span<const uint8_t> data) override;
  Result<bool> PutParts(std::string_view key,
                        std::span<const std::span<const uint8_t>> parts) override;
  // Put of an object of `size` bytes that `read` produces a piece of at most 4 MiB at a
  // time, in ascending order (from the start again if the file system refuses direct I/O):
  // for copying an object from another store without holding it whole in memory. An error
  // from `read` fails the Put like a write error (nothing is left behind).
  Result<bool> PutFrom(std::string_view key, uint64_t size, const ObjectPieceReader& read);
  Result<uint64_t> Size(std::string_view key) override;
  Status ReadRange(std::string_view key, uint64_t offset, std::span<uint8_t> out) override;
  Result<std::vector<uint8_t>> Get(std::string_view key) override;
  Result<UniqueFd> OpenFile(std::string_view key) override;
  Status Delete(std::string_view key) override;
  Status List(std::string_view prefix,
              const std::function<Status(std::string_view key, uint64_t size)>& visit) override;

  const std::string& root() const { return root_; }

 private:
  LocalObjectStore(std::string root, uint64_t nonce) : root_(std::move(root)), nonce_(nonce) {}

  // The Put steps around `write`, which fills the empty temporary file `fd`.
  Result<bool> PutWith(std::string_view key, const std::function<Status(int fd)>& write);
  // Creates every directory from root_ down to `rel_dir` ("" = root_) and makes each entry
  // durable in its parent (once per directory per store instance).
  Status EnsureDurableDir(const std::string& rel_dir);
  std::string TempName(std::string_view base);
  // Makes the entries linked into the directory `dir_path` so far durable (a shared fsync).
  Status SyncDir(const std::string& dir_path);

  const std::string root_;
  const uint64_t nonce_;  // random per instance: temp names of concurrent processes differ

  Mutex mu_;
  uint64_t temp_counter_ GUARDED_BY(mu_) = 0;
  std::unordered_set<std::string> durable_dirs_ GUARDED_BY(mu_);  // relative to root_
  // The map only (each group syncs on its own); keyed by absolute path.
  std::unordered_map<std::string, std::unique_ptr<FsyncGroup>> dir_syncs_ GUARDED_BY(mu_);
};

}  // namespace xet
