#include "client/cache/dedup_index.h"

#include "format/merkle.h"

namespace xet {

namespace {

// Entry i is chunk i of the xorb only when the block lists the whole xorb: offsets
// cumulative from 0 and summing to num_bytes_in_cas. Anything else is skipped.
bool IsWholeXorb(const CasInfo& cas) {
  if (cas.entries.empty()) return false;
  uint64_t offset = 0;
  for (const CasChunkEntry& e : cas.entries) {
    if (e.chunk_byte_range_start != offset || e.unpacked_segment_bytes == 0) return false;
    offset += e.unpacked_segment_bytes;
  }
  return offset == cas.num_bytes_in_cas;
}

}  // namespace

uint32_t DedupIndex::NewSessionXorb() {
  MutexLock lock(mu_);
  xorbs_.push_back(Hash());
  trust_.push_back(XorbTrust::kConfirmed);
  return static_cast<uint32_t>(xorbs_.size() - 1);
}

void DedupIndex::SetXorbHash(uint32_t xorb, const Hash& hash) {
  MutexLock lock(mu_);
  xorbs_.at(xorb) = hash;
  xorb_ids_.emplace(hash, xorb);
}

Hash DedupIndex::XorbHash(uint32_t xorb) const {
  MutexLock lock(mu_);
  return xorbs_.at(xorb);
}

uint32_t DedupIndex::XorbIdLocked(const Hash& hash, XorbTrust trust) {
  auto [it, inserted] = xorb_ids_.emplace(hash, static_cast<uint32_t>(xorbs_.size()));
  if (inserted) {
    xorbs_.push_back(hash);
    trust_.push_back(trust);
  } else if (trust == XorbTrust::kConfirmed) {
    trust_[it->second] = XorbTrust::kConfirmed;
  }
  return it->second;
}

bool DedupIndex::UsableLocked(ChunkLocation loc) const {
  return trust_[loc.xorb] != XorbTrust::kMissing;
}

XorbTrust DedupIndex::Trust(uint32_t xorb) const {
  MutexLock lock(mu_);
  return trust_.at(xorb);
}

void DedupIndex::SetTrust(uint32_t xorb, XorbTrust trust) {
  MutexLock lock(mu_);
  trust_.at(xorb) = trust;
}

void DedupIndex::Insert(const Hash& chunk, ChunkLocation loc, uint64_t size) {
  MutexLock lock(mu_);
  chunks_.emplace(chunk, loc);
  if (sequences_.size() <= loc.xorb) sequences_.resize(loc.xorb + 1);
  std::vector<ChunkInfo>& seq = sequences_[loc.xorb];
  if (seq.size() == loc.index) seq.push_back({chunk, size});  // packed in order
}

std::optional<ChunkInfo> DedupIndex::FollowingChunk(const Hash& chunk) const {
  MutexLock lock(mu_);
  const auto it = chunks_.find(chunk);
  if (it == chunks_.end() || it->second.xorb >= sequences_.size()) return std::nullopt;
  const std::vector<ChunkInfo>& seq = sequences_[it->second.xorb];
  const size_t next = size_t{it->second.index} + 1;
  if (it->second.index >= seq.size() || seq[it->second.index].hash != chunk || next >= seq.size()) {
    return std::nullopt;
  }
  return seq[next];
}

size_t DedupIndex::AddShard(const Shard& shard, uint64_t now, XorbTrust trust) {
  const Hash key = shard.footer ? shard.footer->chunk_hash_hmac_key : Hash();
  const uint64_t expiry = shard.footer ? shard.footer->shard_key_expiry : 0;
  if (!key.IsZero() && expiry != 0 && expiry <= now) return 0;
  MutexLock lock(mu_);
  std::unordered_map<Hash, ChunkLocation, HashHasher>* map = &chunks_;
  if (!key.IsZero()) {
    Keyed* keyed = nullptr;
    for (auto& k : keyed_) {
      if (k.key == key) keyed = &k;
    }
    if (keyed == nullptr) {
      if (keyed_.size() >= kMaxDedupKeys) keyed_.pop_front();
      keyed_.push_back(Keyed{key, expiry, {}});
      keyed = &keyed_.back();
    }
    if (expiry > keyed->expiry || expiry == 0) keyed->expiry = expiry;
    map = &keyed->chunks;
  }
  size_t added = 0;
  for (const CasInfo& cas : shard.cas_infos) {
    if (cas.cas_hash.IsZero() || !IsWholeXorb(cas)) continue;
    const uint32_t id = XorbIdLocked(cas.cas_hash, trust);
    if (map == &chunks_) {
      if (sequences_.size() <= id) sequences_.resize(id + 1);
      if (sequences_[id].empty()) {
        sequences_[id].reserve(cas.entries.size());
        for (const CasChunkEntry& e : cas.entries) {
          sequences_[id].push_back({e.chunk_hash, e.unpacked_segment_bytes});
        }
      }
    }
    for (size_t i = 0; i < cas.entries.size(); ++i) {
      added += map->emplace(cas.entries[i].chunk_hash, ChunkLocation{id, static_cast<uint32_t>(i)})
                   .second;
    }
  }
  return added;
}

std::optional<ChunkLocation> DedupIndex::Find(const Hash& chunk, uint64_t now) const {
  MutexLock lock(mu_);
  if (auto it = chunks_.find(chunk); it != chunks_.end() && UsableLocked(it->second)) {
    return it->second;
  }
  for (const Keyed& k : keyed_) {
    if (k.expiry != 0 && k.expiry <= now) continue;
    if (auto it = k.chunks.find(DedupProtectedHash(chunk, k.key));
        it != k.chunks.end() && UsableLocked(it->second)) {
      return it->second;
    }
  }
  return std::nullopt;
}

size_t DedupIndex::size() const {
  MutexLock lock(mu_);
  size_t n = chunks_.size();
  for (const Keyed& k : keyed_) n += k.chunks.size();
  return n;
}

}  // namespace xet
