// DedupIndex: where chunks already are, for one upload session. Thread-safe.
//
// Three sources feed it: xorbs this session is packing or uploading (their hash is known
// only once they are sealed, so they are named by a session xorb id), shards from the
// local shard cache, and global-dedup answers. Chunk hashes in a global-dedup answer are
// keyed (DedupProtectedHash with the shard footer's key) and valid until the footer's
// expiry: such entries are kept per key, and a lookup computes the protected form of the
// chunk hash for each live key (expired keys are dropped; at most kMaxDedupKeys are kept,
// the oldest dropped first).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <vector>

#include "common/mutex.h"
#include "format/hash.h"
#include "format/merkle.h"
#include "format/shard_types.h"

namespace xet {

inline constexpr size_t kMaxDedupKeys = 16;

// A chunk inside a xorb: the xorb's session id and the chunk's index in it.
struct ChunkLocation {
  uint32_t xorb = 0;
  uint32_t index = 0;
  friend bool operator==(const ChunkLocation&, const ChunkLocation&) = default;
};

// Whether a shard may reference a xorb. Session xorbs and the xorbs of a global-dedup
// answer (the server just said it has them for this scope) are confirmed. Xorbs known only
// from the local shard cache are unconfirmed: the cache may describe a server that was
// wiped or a scope this token cannot see, so the uploader asks the server once (HEAD)
// before the first reference and records the outcome.
enum class XorbTrust : uint8_t { kConfirmed, kUnconfirmed, kMissing };

class DedupIndex {
 public:
  // A new xorb of this session, its hash not known yet.
  uint32_t NewSessionXorb();
  // Records the hash of a session xorb once sealed.
  void SetXorbHash(uint32_t xorb, const Hash& hash);
  // The hash of xorb `xorb` (zero for a session xorb not sealed yet).
  Hash XorbHash(uint32_t xorb) const;

  // Records that `chunk` (`size` bytes) is at `loc` (the first location recorded wins).
  // Chunks of a session xorb are inserted in order, so the xorb's chunk sequence is known.
  void Insert(const Hash& chunk, ChunkLocation loc, uint64_t size);
  // Adds every chunk of every CAS block of `shard` (a cached shard or a global-dedup
  // answer); a CAS block that does not list its whole xorb is skipped. A keyed shard (non-zero
  // footer key) is ignored once `now` passes its expiry. Its xorbs get `trust` unless they
  // are known with a better one (confirmed beats unconfirmed; a confirmation overrides
  // missing). Returns the number of chunk entries added.
  size_t AddShard(const Shard& shard, uint64_t now, XorbTrust trust = XorbTrust::kConfirmed);

  // Where `chunk` is; locations in xorbs marked kMissing are skipped.
  std::optional<ChunkLocation> Find(const Hash& chunk, uint64_t now) const;

  // The chunk that came after `chunk` in the xorb where it was first recorded (hash and
  // size), if that xorb's whole chunk sequence is known: a session xorb, or an unkeyed
  // shard's (the client's own uploads; global-dedup answers are keyed and never count).
  // For predicting chunk boundaries (the uploader checks every prediction's hash and cut),
  // never for referencing data: trust is not considered.
  std::optional<ChunkInfo> FollowingChunk(const Hash& chunk) const;

  XorbTrust Trust(uint32_t xorb) const;
  void SetTrust(uint32_t xorb, XorbTrust trust);

  size_t size() const;

 private:
  struct Keyed {
    Hash key;
    uint64_t expiry = 0;  // 0: none
    std::unordered_map<Hash, ChunkLocation, HashHasher> chunks;
  };
  uint32_t XorbIdLocked(const Hash& hash, XorbTrust trust) REQUIRES(mu_);
  bool UsableLocked(ChunkLocation loc) const REQUIRES(mu_);

  mutable Mutex mu_;
  std::vector<Hash> xorbs_ GUARDED_BY(mu_);       // by id
  std::vector<XorbTrust> trust_ GUARDED_BY(mu_);  // by id
  // Sealed or external xorbs.
  std::unordered_map<Hash, uint32_t, HashHasher> xorb_ids_ GUARDED_BY(mu_);
  std::unordered_map<Hash, ChunkLocation, HashHasher> chunks_ GUARDED_BY(mu_);
  // By xorb id: the xorb's chunks in order, where known (40 bytes per chunk).
  std::vector<std::vector<ChunkInfo>> sequences_ GUARDED_BY(mu_);
  std::deque<Keyed> keyed_ GUARDED_BY(mu_);
};

}  // namespace xet
