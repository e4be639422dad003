#include "support/xet_fixtures.h"

#include <stdexcept>

#include "format/chunker.h"
#include "format/keyed_hash.h"
#include "format/sha256.h"
#include "format/shard_writer.h"

namespace xet::testing {

UploadArtifacts PrepareUpload(std::span<const uint8_t> data, CompressionPolicy policy,
                              size_t max_xorb_chunks) {
  UploadArtifacts a;
  a.size = data.size();
  XorbBuilder builder(policy);
  FileInfo file;
  file.flags = kFileFlagWithVerification | kFileFlagWithMetadataExt;
  std::vector<Hash> term_hashes;
  uint32_t term_start = 0;
  uint64_t term_bytes = 0;

  auto close_term = [&](const Hash& xorb_hash) {
    if (term_hashes.empty()) return;
    FileDataSequenceEntry t;
    t.cas_hash = xorb_hash;
    t.unpacked_segment_bytes = static_cast<uint32_t>(term_bytes);
    t.chunk_index_start = term_start;
    t.chunk_index_end = term_start + static_cast<uint32_t>(term_hashes.size());
    file.terms.push_back(t);
    file.verification.push_back({VerificationHash(term_hashes), {}});
    term_hashes.clear();
    term_bytes = 0;
  };
  auto finish_xorb = [&] {
    SerializedXorb x = builder.Finish();
    close_term(x.hash);
    CasInfo info;
    info.cas_hash = x.hash;
    uint32_t start = 0;
    for (const ChunkInfo& c : x.table.chunks) {
      info.entries.push_back({c.hash, start, static_cast<uint32_t>(c.size), 0, 0});
      start += static_cast<uint32_t>(c.size);
    }
    info.num_bytes_in_cas = start;
    info.num_bytes_on_disk = static_cast<uint32_t>(x.bytes.size());
    a.shard.cas_infos.push_back(std::move(info));
    a.xorbs.push_back(std::move(x));
    term_start = 0;
  };

  uint64_t prev = 0;
  for (uint64_t end : ChunkBoundaries(data)) {
    const auto chunk = data.subspan(prev, end - prev);
    const Hash h = ChunkHash(chunk);
    if (!builder.CanAdd(chunk.size()) || builder.num_chunks() >= max_xorb_chunks) finish_xorb();
    if (!builder.Add(chunk, h).ok()) throw std::runtime_error("XorbBuilder::Add failed");
    a.chunks.push_back({h, chunk.size()});
    term_hashes.push_back(h);
    term_bytes += chunk.size();
    prev = end;
  }
  if (!builder.empty()) finish_xorb();

  a.file_hash = FileHash(a.chunks);
  file.file_hash = a.file_hash;
  file.metadata_ext = FileMetadataExt{Sha256ToXetOrder(Sha256Of(data)), {}};
  a.shard.files.push_back(std::move(file));
  a.shard_bytes = SerializeForUpload(a.shard);
  return a;
}

UploadArtifacts PrepareInterleavedUpload(size_t num_chunks, size_t chunk_size, uint64_t seed,
                                         std::vector<uint8_t>* data) {
  UploadArtifacts a;
  data->clear();
  XorbBuilder even(CompressionPolicy::kNone), odd(CompressionPolicy::kNone);
  std::vector<std::vector<uint8_t>> chunks;
  uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (size_t i = 0; i < num_chunks; ++i) {
    std::vector<uint8_t> c(chunk_size);
    for (auto& b : c) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      b = static_cast<uint8_t>(x);
    }
    const Hash h = ChunkHash(c);
    if (!(i % 2 == 0 ? even : odd).Add(c, h).ok()) throw std::runtime_error("Add failed");
    a.chunks.push_back({h, c.size()});
    data->insert(data->end(), c.begin(), c.end());
  }
  SerializedXorb xe = even.Finish(), xo = odd.Finish();
  FileInfo file;
  file.flags = kFileFlagWithVerification;
  for (size_t i = 0; i < num_chunks; ++i) {
    FileDataSequenceEntry t;
    t.cas_hash = i % 2 == 0 ? xe.hash : xo.hash;
    t.unpacked_segment_bytes = static_cast<uint32_t>(chunk_size);
    t.chunk_index_start = static_cast<uint32_t>(i / 2);
    t.chunk_index_end = t.chunk_index_start + 1;
    file.terms.push_back(t);
    const Hash one[] = {a.chunks[i].hash};
    file.verification.push_back({VerificationHash(one), {}});
  }
  for (const SerializedXorb* xorb : {&xe, &xo}) {
    CasInfo info;
    info.cas_hash = xorb->hash;
    uint32_t start = 0;
    for (const ChunkInfo& c : xorb->table.chunks) {
      info.entries.push_back({c.hash, start, static_cast<uint32_t>(c.size), 0, 0});
      start += static_cast<uint32_t>(c.size);
    }
    info.num_bytes_in_cas = start;
    a.shard.cas_infos.push_back(std::move(info));
  }
  a.xorbs.push_back(std::move(xe));
  a.xorbs.push_back(std::move(xo));
  a.size = data->size();
  a.file_hash = FileHash(a.chunks);
  file.file_hash = a.file_hash;
  a.shard.files.push_back(std::move(file));
  a.shard_bytes = SerializeForUpload(a.shard);
  return a;
}

UploadArtifacts PrepareSparseFile(const UploadArtifacts& base, std::span<const uint8_t> base_data,
                                  size_t stride, std::vector<uint8_t>* data) {
  UploadArtifacts a;
  data->clear();
  FileInfo file;
  file.flags = kFileFlagWithVerification;
  uint64_t offset = 0;
  size_t n = 0;  // chunk number in base's file order
  for (const FileDataSequenceEntry& t : base.shard.files.at(0).terms) {
    for (uint32_t idx = t.chunk_index_start; idx < t.chunk_index_end; ++idx, ++n) {
      const ChunkInfo& c = base.chunks.at(n);
      if (n % stride == 0) {
        FileDataSequenceEntry term;
        term.cas_hash = t.cas_hash;
        term.unpacked_segment_bytes = static_cast<uint32_t>(c.size);
        term.chunk_index_start = idx;
        term.chunk_index_end = idx + 1;
        file.terms.push_back(term);
        const Hash one[] = {c.hash};
        file.verification.push_back({VerificationHash(one), {}});
        a.chunks.push_back(c);
        data->insert(data->end(), base_data.begin() + static_cast<std::ptrdiff_t>(offset),
                     base_data.begin() + static_cast<std::ptrdiff_t>(offset + c.size));
      }
      offset += c.size;
    }
  }
  a.size = data->size();
  a.file_hash = FileHash(a.chunks);
  file.file_hash = a.file_hash;
  a.shard.cas_infos = base.shard.cas_infos;
  a.shard.files.push_back(std::move(file));
  a.shard_bytes = SerializeForUpload(a.shard);
  return a;
}

std::string SerializeForUpload(const Shard& shard) {
  auto bytes = SerializeShardForUpload(shard);
  if (!bytes.ok())
    throw std::runtime_error("SerializeShardForUpload: " + bytes.status().ToString());
  return AsString(*bytes);
}

}  // namespace xet::testing
