#include "format/merkle.h"

#include <algorithm>
#include <charconv>
#include <string>

#include "format/keyed_hash.h"

namespace xet {
namespace {

constexpr size_t kMeanBranchingFactor = 4;
constexpr size_t kMinGroupCut = 2;  // the earliest index whose hash may end a group
constexpr size_t kMaxGroupSize = 9;

// Number of nodes in the group that starts at nodes[0].
size_t NextGroupSize(std::span<const ChunkInfo> nodes) {
  if (nodes.size() <= kMinGroupCut) return nodes.size();
  const size_t limit = std::min(kMaxGroupSize, nodes.size());
  for (size_t i = kMinGroupCut; i < limit; ++i) {
    if (nodes[i].hash.Word(3) % kMeanBranchingFactor == 0) return i + 1;
  }
  return limit;
}

ChunkInfo HashGroup(std::span<const ChunkInfo> group, std::string& buf) {
  buf.clear();
  uint64_t total = 0;
  char line[64 + 3 + 20 + 1];
  for (const ChunkInfo& node : group) {
    node.hash.ToHex(line);
    line[64] = ' ';
    line[65] = ':';
    line[66] = ' ';
    char* end = std::to_chars(line + 67, line + sizeof(line), node.size).ptr;
    *end++ = '\n';
    buf.append(line, static_cast<size_t>(end - line));
    total += node.size;
  }
  return {KeyedBlake3(keys::kInternalNodeKey, buf.data(), buf.size()), total};
}

}  // namespace

Hash MerkleRoot(std::span<const ChunkInfo> chunks) {
  if (chunks.empty()) return Hash();
  if (chunks.size() == 1) return chunks[0].hash;

  std::string buf;
  buf.reserve(kMaxGroupSize * 90);
  std::vector<ChunkInfo> level(chunks.begin(), chunks.end());
  std::vector<ChunkInfo> next;
  while (level.size() > 1) {
    next.clear();
    std::span<const ChunkInfo> rest(level);
    while (!rest.empty()) {
      const size_t n = NextGroupSize(rest);
      next.push_back(HashGroup(rest.first(n), buf));
      rest = rest.subspan(n);
    }
    level.swap(next);
  }
  return level[0].hash;
}

Hash FileHash(std::span<const ChunkInfo> chunks, const keys::Key& salt) {
  if (chunks.empty()) return Hash();
  const Hash root = MerkleRoot(chunks);
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
