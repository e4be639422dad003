// ChunkCache: an optional on-disk cache of fetched xorb ranges, so repeated downloads need
// no xorb fetches. An entry is keyed by xorb hash + chunk range [chunk_start, chunk_end) and
// holds the range's chunk records exactly as fetched plus the (hash, size) of every chunk
// computed when it was decoded. Readers decode the records and compare the chunk hashes with
// the stored ones, so a damaged entry is detected (and then Erase()d) rather than served.
//
// Bounded: when the total size of the entries exceeds `max_bytes`, the least recently used
// entries (by access time, kept in memory and on the file's mtime across runs) are removed.
// Writes are crash-safe: a temporary file in <dir>/tmp, then rename into place; leftover
// temporaries are removed when the cache is opened. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "common/result.h"
#include "format/hash.h"
#include "format/merkle.h"

namespace xet {

class ChunkCache {
  using Key = std::tuple<Hash, uint32_t, uint32_t>;

 public:
  struct Entry {
    std::vector<uint8_t> records;   // the chunk records, as fetched
    std::vector<ChunkInfo> chunks;  // one per chunk of the range
  };

  // Creates `dir` if needed and indexes the entries already there.
  static Result<std::unique_ptr<ChunkCache>> Open(const std::string& dir, uint64_t max_bytes);

  // The entry for exactly this range, or nullopt (a miss). An entry whose file is
  // unreadable or malformed is removed and reported as a miss.
  std::optional<Entry> Get(const Hash& xorb, uint32_t chunk_start, uint32_t chunk_end);
  // The same into `out`, reusing its vectors' capacity (a caller reading many entries keeps
  // one Entry); false on a miss (then `out` holds nothing of use).
  bool GetInto(const Hash& xorb, uint32_t chunk_start, uint32_t chunk_end, Entry& out);
  // Stores an entry (replacing any), then evicts down to the bound. An entry larger than
  // the whole bound is not stored.
  Status Put(const Hash& xorb, uint32_t chunk_start, uint32_t chunk_end,
             std::span<const uint8_t> records, std::span<const ChunkInfo> chunks);
  void Erase(const Hash& xorb, uint32_t chunk_start, uint32_t chunk_end);

  // Get for records read in pieces: the entry's chunks first, then its records through a
  // caller's buffer. A reader whose records turn out damaged (the caller's decoding fails)
  // should be followed by Erase.
  class Reader {
   public:
    ~Reader();
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;
    const std::vector<ChunkInfo>& chunks() const { return chunks_; }
    uint64_t records_bytes() const { return records_bytes_; }
    // Reads the records in order, `buffer.size()` bytes at a time, into `on_records`; its
    // error is returned as is; IoError when the file cannot be read to its end.
    Status ReadRecords(std::span<uint8_t> buffer,
                       const std::function<Status(std::span<const uint8_t>)>& on_records);

   private:
    friend class ChunkCache;
    Reader(int fd, std::vector<ChunkInfo> chunks, uint64_t offset, uint64_t records_bytes)
        : fd_(fd), chunks_(std::move(chunks)), offset_(offset), records_bytes_(records_bytes) {}
    int fd_;
    std::vector<ChunkInfo> chunks_;
    uint64_t offset_;  // of the records in the file
    uint64_t records_bytes_;
  };
  // The entry for exactly this range, or nullptr (a miss; an entry whose header or chunk
  // table is unreadable or malformed is removed and reported as a miss).
  std::unique_ptr<Reader> OpenEntry(const Hash& xorb, uint32_t chunk_start, uint32_t chunk_end);

  // Put for records that arrive in pieces: Append them in order, then Commit with the
  // chunks (which stores the entry as Put does). An entry that is never committed leaves
  // nothing behind (its temporary file is removed by the destructor).
  class Writer {
   public:
    ~Writer();
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;
    Status Append(std::span<const uint8_t> records);
    // InvalidArgument when the records appended are not the `records_bytes` announced or the
    // chunks do not match the range.
    Status Commit(std::span<const ChunkInfo> chunks);

   private:
    friend class ChunkCache;
    Writer(ChunkCache* cache, Key key, std::string tmp, int fd, uint64_t records_bytes)
        : cache_(cache),
          key_(std::move(key)),
          tmp_(std::move(tmp)),
          fd_(fd),
          records_bytes_(records_bytes) {}
    ChunkCache* cache_;  // null: the entry is too large to be kept; every call succeeds
    Key key_;
    std::string tmp_;
    int fd_ = -1;
    uint64_t records_bytes_ = 0;
    uint64_t written_ = 0;
  };
  // Starts an entry of `records_bytes` bytes of records.
  Result<std::unique_ptr<Writer>> StartPut(const Hash& xorb, uint32_t chunk_start,
                                           uint32_t chunk_end, uint64_t records_bytes);

  // The range [start, end) of an entry of `xorb` holding chunk `chunk`, or nullopt. Ranged
  // readers store and look up entries for runs of chunks that need not match exactly.
  // Looks at a bounded number of entries starting at or before `chunk`.
  std::optional<std::pair<uint32_t, uint32_t>> FindCovering(const Hash& xorb, uint32_t chunk);

  uint64_t size_bytes() const;
  size_t num_entries() const;

 private:
  struct Slot {
    uint64_t bytes = 0;
    uint64_t last_access = 0;  // ns since epoch
  };
  ChunkCache(std::string dir, uint64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {}
  std::string PathOf(const Key& k) const;
  void EvictLocked() REQUIRES(mu_);
  void EraseLocked(const Key& k) REQUIRES(mu_);
  // Sets a slot's access time, keeping by_access_ in step.
  void TouchLocked(const Key& k, Slot& slot, uint64_t when) REQUIRES(mu_);

  const std::string dir_;
  const uint64_t max_bytes_;
  mutable Mutex mu_;
  std::map<Key, Slot> slots_ GUARDED_BY(mu_);
  // (last access, key) of every slot, oldest first: eviction without a scan (a ranged
  // reader stores many small entries).
  std::set<std::pair<uint64_t, Key>> by_access_ GUARDED_BY(mu_);
  uint64_t total_ GUARDED_BY(mu_) = 0;
  uint64_t tmp_counter_ GUARDED_BY(mu_) = 0;
};

}  // namespace xet
