// Merkle aggregation and the hashes derived from chunk hashes: xorb hash, file hash,
// term verification hash, and the global-dedup eligibility rule (Xet spec, hashing.md).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "format/hash.h"
#include "format/keys.h"

namespace xet {

// A leaf or internal node of the aggregation tree: a hash and the byte count under it.
struct ChunkInfo {
  Hash hash;
  uint64_t size = 0;
  friend bool operator==(const ChunkInfo&, const ChunkInfo&) = default;
};

// The root of the content-defined merkle tree over `chunks` (xet-core's aggregated hash).
// Each level is cut left to right into groups: a group of <= 2 remaining nodes takes them
// all; otherwise it ends after the first node i in [2, min(9, n)) (0-based, relative to the
// group start) whose hash's last 8 bytes, read as a little-endian u64, are = 0 mod 4, or
// after min(9, n) nodes. Each group (even a group of one) becomes keyed BLAKE3
// (INTERNAL_NODE_KEY) of its "<hash> : <size>\n" lines, with the sizes summed.
// Returns all zeros for no chunks and the chunk hash itself for one chunk.
Hash MerkleRoot(std::span<const ChunkInfo> chunks);

// The aggregation's grouping parameters (conformance/keys.json "merkle").
inline constexpr uint64_t kMerkleBranchingFactor = 4;
inline constexpr size_t kMerkleMinGroupCut = 2;  // the earliest index that may end a group
inline constexpr size_t kMerkleMaxGroupSize = 9;

// Whether a node's hash ends a group by itself (last 8 bytes as LE u64 = 0 mod 4).
inline bool IsMerkleGroupCut(const Hash& h) { return h.Word(3) % kMerkleBranchingFactor == 0; }
// Number of nodes in the group that starts at nodes[0] (the rule of MerkleRoot above).
size_t NextMerkleGroupSize(std::span<const ChunkInfo> nodes);
// The parent of one group: keyed BLAKE3 (INTERNAL_NODE_KEY) over its "<hash> : <size>\n"
// lines, with the sizes summed.
ChunkInfo HashMerkleGroup(std::span<const ChunkInfo> group);

// The xorb hash of the chunks it holds, in order (= MerkleRoot).
inline Hash XorbHash(std::span<const ChunkInfo> chunks) { return MerkleRoot(chunks); }

// The file hash: keyed BLAKE3 with `salt` (default all zeros) over the raw bytes of the
// merkle root of the file's chunks. All zeros for an empty file.
Hash FileHash(std::span<const ChunkInfo> chunks, const keys::Key& salt = keys::kFileHashKey);
// The file hash of a non-empty file whose chunks' merkle root is `root` (how a file hash
// is composed from merkle subtrees without every chunk: format/merkle_subtree.h).
Hash FileHashFromRoot(const Hash& root, const keys::Key& salt = keys::kFileHashKey);

// The term verification hash: keyed BLAKE3 (VERIFICATION_KEY) over the concatenated raw
// chunk hashes of the term's chunk range.
Hash VerificationHash(std::span<const Hash> chunk_hashes);

// Global dedup: a chunk hash is eligible for the /v1/chunks query when its last 8 bytes,
// read as a little-endian u64, are divisible by 1024. (The first chunk of every file is
// eligible too; that rule belongs to the caller, which knows chunk positions.)
inline bool IsGlobalDedupEligible(const Hash& chunk_hash) { return chunk_hash.Word(3) % 1024 == 0; }

// The protected form of a chunk hash in a global-dedup shard: keyed BLAKE3 with the 32
// key bytes exactly as stored in the shard footer, over the raw chunk hash.
Hash DedupProtectedHash(const Hash& chunk_hash, const Hash& footer_key);

}  // namespace xet
