#include "format/merkle.h"

#include <algorithm>
#include <charconv>

#include "format/keyed_hash.h"

namespace xet {

size_t NextMerkleGroupSize(std::span<const ChunkInfo> nodes) {
  if (nodes.size() <= kMerkleMinGroupCut) return nodes.size();
  const size_t limit = std::min(kMerkleMaxGroupSize, nodes.size());
  for (size_t i = kMerkleMinGroupCut; i < limit; ++i) {
    if (IsMerkleGroupCut(nodes[i].hash)) return i + 1;
  }
  return limit;
}

ChunkInfo HashMerkleGroup(std::span<const ChunkInfo> group) {
  KeyedHasher hasher(keys::kInternalNodeKey);
  uint64_t total = 0;
  char line[64 + 3 + 20 + 1];
  for (const ChunkInfo& node : group) {
    node.hash.ToHex(line);
    line[64] = ' ';
    line[65] = ':';
    line[66] = ' ';
    char* end = std::to_chars(line + 67, line + sizeof(line) - 1, node.size).ptr;
    *end++ = '\n';
    hasher.Update(line, static_cast<size_t>(end - line));
    total += node.size;
  }
  return {hasher.Finalize(), total};
}

Hash MerkleRoot(std::span<const ChunkInfo> chunks) {
  if (chunks.empty()) return Hash();
  if (chunks.size() == 1) return chunks[0].hash;

  std::vector<ChunkInfo> level(chunks.begin(), chunks.end());
  std::vector<ChunkInfo> next;
  while (level.size() > 1) {
    next.clear();
    std::span<const ChunkInfo> rest(level);
    while (!rest.empty()) {
      const size_t n = NextMerkleGroupSize(rest);
      next.push_back(HashMerkleGroup(rest.first(n)));
      rest = rest.subspan(n);
    }
    level.swap(next);
  }
  return level[0].hash;
}

Hash FileHash(std::span<const ChunkInfo> chunks, const keys::Key& salt) {
  if (chunks.empty()) return Hash();
  return FileHashFromRoot(MerkleRoot(chunks), salt);
}

Hash FileHashFromRoot(const Hash& root, const keys::Key& salt) {
  return KeyedBlake3(salt, root.data(), Hash::kSize);
}

Hash VerificationHash(std::span<const Hash> chunk_hashes) {
  KeyedHasher h(keys::kVerificationKey);
  for (const Hash& c : chunk_hashes) h.Update(c.data(), Hash::kSize);
  return h.Finalize();
}

Hash DedupProtectedHash(const Hash& chunk_hash, const Hash& footer_key) {
  return KeyedBlake3(footer_key.data(), chunk_hash.data(), Hash::kSize);
}

}  // namespace xet
