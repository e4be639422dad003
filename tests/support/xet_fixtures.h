// Builds what a Xet client uploads for a file (xorbs and an upload-form shard), the
// simple way, so server tests can drive the CAS API with real protocol artifacts.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "format/merkle.h"
#include "format/shard_types.h"
#include "format/xorb.h"

namespace xet::testing {

struct UploadArtifacts {
  Hash file_hash;
  uint64_t size = 0;
  std::vector<ChunkInfo> chunks;
  std::vector<SerializedXorb> xorbs;  // the file's chunks in order, packed into xorbs
  Shard shard;                        // one file info (with verification + SHA-256)
  std::string shard_bytes;            // the shard in upload form (no footer)
};

// Chunks `data` and packs every chunk, in order, into as many xorbs as needed (a new xorb
// also starts after `max_xorb_chunks` chunks).
UploadArtifacts PrepareUpload(std::span<const uint8_t> data,
                              CompressionPolicy policy = CompressionPolicy::kPredict,
                              size_t max_xorb_chunks = SIZE_MAX);

// A file of `num_chunks` fixed-size random chunks stored in two xorbs, even chunks in
// one and odd chunks in the other, described by one term per chunk (alternating xorbs):
// reconstructions then have many terms and multi-range fetches. `data` gets the file bytes.
UploadArtifacts PrepareInterleavedUpload(size_t num_chunks, size_t chunk_size, uint64_t seed,
                                         std::vector<uint8_t>* data);

// A second file made of every `stride`-th chunk of `base`'s first file (`base_data` holds
// its bytes), one term per chunk, referencing base's xorbs: its reconstruction needs several
// ranges of one xorb, i.e. multi-range fetches. The shard repeats base's CAS blocks. `data`
// gets the new file's bytes.
UploadArtifacts PrepareSparseFile(const UploadArtifacts& base, std::span<const uint8_t> base_data,
                                  size_t stride, std::vector<uint8_t>* data);

// Re-serializes `shard` in upload form (after a test modified it).
std::string SerializeForUpload(const Shard& shard);

inline std::string AsString(std::span<const uint8_t> b) { return std::string(b.begin(), b.end()); }

}  // namespace xet::testing
