#include "index_fill.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace xet::bench {
namespace {

constexpr uint64_t kFilesPerShard = 1000;
constexpr uint32_t kChunkBytes = 4096;

// Distinct synthetic hashes per kind (1 xorb, 2 chunk, 3 shard, 4 file) and number.
Hash FillHash(uint64_t kind, uint64_t n) {
  Hash h;
  const uint64_t w[4] = {0xf111ull << 32 | kind, n, kind * 0x9E3779B97F4A7C15ull ^ n, ~n};
  std::memcpy(h.mutable_data(), w, sizeof(w));
  return h;
}

void Check(const Status& st, const char* what) {
  if (!st.ok()) throw std::runtime_error(std::string(what) + ": " + st.ToString());
}

}  // namespace

void FillIndex(Index& index, uint64_t from, uint64_t to, unsigned threads) {
  const Scope scope = "bench/fill";
  // Shards of kFilesPerShard files, each shard after its xorbs: one worker per shard at a time.
  const uint64_t first = from / kFilesPerShard, last = (to + kFilesPerShard - 1) / kFilesPerShard;
  std::atomic<uint64_t> next{first};
  std::vector<std::thread> workers;
  std::exception_ptr failure;
  std::atomic<bool> failed{false};
  for (unsigned t = 0; t < std::max(1u, threads); ++t) {
    workers.emplace_back([&] {
      try {
        for (uint64_t s = next++; s < last && !failed; s = next++) {
          const uint64_t lo = std::max(from, s * kFilesPerShard);
          const uint64_t hi = std::min(to, (s + 1) * kFilesPerShard);
          ShardCommit commit;
          commit.shard_hash = FillHash(3, s * kFilesPerShard + lo);
          commit.scope = scope;
          for (uint64_t i = lo; i < hi; ++i) {
            XorbRecord x;
            x.hash = FillHash(1, i);
            x.object_size = kChunkBytes + 8;
            x.chunks.push_back({FillHash(2, i), kChunkBytes + 8, kChunkBytes});
            Check(index.PutXorb(x, scope).status(), "PutXorb");
            FileRecord f;
            f.file_hash = FillHash(4, i);
            f.size = kChunkBytes;
            f.terms.push_back({x.hash, 0, 1, kChunkBytes});
            commit.files.push_back(std::move(f));
            commit.xorbs.push_back(x.hash);
          }
          Check(index.CommitShard(commit).status(), "CommitShard");
        }
      } catch (...) {
        if (!failed.exchange(true)) failure = std::current_exception();
      }
    });
  }
  for (auto& w : workers) w.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace xet::bench
