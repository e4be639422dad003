#include "store/index_support.h"

#include <algorithm>
#include <chrono>

#include "format/merkle.h"

namespace xet {

std::vector<Hash> SortedUniqueHashes(std::vector<Hash> v) {
  std::sort(v.begin(), v.end(), [](const Hash& a, const Hash& b) {
    return std::lexicographical_compare(a.data(), a.data() + Hash::kSize, b.data(),
                                        b.data() + Hash::kSize);
  });
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::vector<Hash> DedupIndexedChunks(const XorbRecord& xorb) {
  std::vector<Hash> eligible;
  for (size_t i = 0; i < xorb.chunks.size(); ++i) {
    if (i == 0 || IsGlobalDedupEligible(xorb.chunks[i].hash)) {
      eligible.push_back(xorb.chunks[i].hash);
    }
  }
  return SortedUniqueHashes(std::move(eligible));
}

XorbRecord XorbRecordOf(const Hash& hash, const XorbChunkTable& table, uint64_t object_size) {
  XorbRecord rec;
  rec.hash = hash;
  rec.object_size = object_size;
  rec.chunks.resize(table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    rec.chunks[i] = {table.chunks[i].hash, table.boundary_offsets[i], table.unpacked_offsets[i]};
  }
  return rec;
}

std::vector<Hash> XorbsNamedBy(const ShardCommit& commit) {
  std::vector<Hash> xorbs = commit.xorbs;
  for (const FileRecord& f : commit.files) {
    for (const FileTerm& t : f.terms) xorbs.push_back(t.xorb_hash);
  }
  return SortedUniqueHashes(std::move(xorbs));
}

Status XorbNotUploaded(const Hash& xorb) {
  return Status::InvalidArgument("references xorb " + xorb.ToHex() +
                                 " which was not uploaded; upload xorbs before the shard");
}

int64_t WallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace xet
