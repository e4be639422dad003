// The protocol's fixed BLAKE3 keys (Xet spec, hashing.md).
#pragma once

#include <array>
#include <cstdint>

namespace xet::keys {

using Key = std::array<uint8_t, 32>;

// Chunk hashes: keyed BLAKE3 of the chunk bytes.
inline constexpr Key kDataKey = {102, 151, 245, 119, 91,  149, 80,  222, 49,  53,  203,
                                 172, 165, 151, 24,  28,  157, 228, 33,  16,  155, 235,
                                 43,  88,  180, 208, 176, 75,  147, 173, 242, 41};
// Merkle internal nodes: keyed BLAKE3 of "<hash> : <size>\n" lines.
inline constexpr Key kInternalNodeKey = {1,   126, 197, 199, 165, 71,  41,  150, 253, 148, 102,
                                         102, 180, 138, 2,   230, 93,  221, 83,  111, 55,  199,
                                         109, 210, 248, 99,  82,  230, 74,  83,  113, 63};
// Term verification hashes: keyed BLAKE3 of the concatenated raw chunk hashes.
inline constexpr Key kVerificationKey = {127, 24,  87,  214, 206, 86,  237, 102, 18,  127, 249,
                                         19,  231, 165, 195, 243, 164, 205, 38,  213, 181, 219,
                                         73,  230, 65,  36,  152, 127, 40,  251, 148, 195};
// File hashes: keyed BLAKE3 of the merkle root with the all-zero key.
inline constexpr Key kFileHashKey = {};

}  // namespace xet::keys
