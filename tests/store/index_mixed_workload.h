// A concurrent workload of writes and reads on one Index: the contract suite checks that
// every call succeeds and reads back what was written, a backend's own tests check what it
// cost (SQLite: the group-commit counters).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "store/index.h"
#include "store/index_test_records.h"

namespace xet::testing::index_test {

inline constexpr int kMixedThreads = 16, kMixedPerThread = 25;
// Every thread registers one token every 5 iterations.
inline constexpr int kMixedTokens = kMixedThreads * kMixedPerThread / 5;
// Write calls of the workload: PutXorb and CommitShard per iteration, and the tokens.
inline constexpr uint64_t kMixedWrites = kMixedThreads * kMixedPerThread * 2 + kMixedTokens;

// Runs kMixedThreads threads of kMixedPerThread iterations, each storing an xorb and a
// shard of its own scope and reading them back, plus a file another thread may be writing.
// Returns the number of iterations in which a call failed or read back something wrong.
inline int RunMixedReadsAndWrites(Index& index) {
  constexpr int kThreads = kMixedThreads, kPerThread = kMixedPerThread;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const Scope scope = "ns/" + std::to_string(t % 4);
      for (int i = 0; i < kPerThread; ++i) {
        const uint64_t n = static_cast<uint64_t>(t * 1000 + i);
        XorbRecord x = MakeXorb(n, 4);
        FileRecord f = MakeFile(n, {x.hash}, 4);
        bool ok = index.PutXorb(x, scope).ok();
        auto r = index.CommitShard({H(6, n), scope, {f}, {x.hash}});
        ok = ok && r.ok() && *r == ShardCommitResult::kRegistered;
        auto got = index.GetFile(f.file_hash);
        ok = ok && got.ok() && got->has_value() && **got == f;
        auto vis = index.FileVisible(f.file_hash, std::vector<Scope>{scope});
        ok = ok && vis.ok() && *vis;
        auto gx = index.GetXorb(x.hash);
        ok = ok && gx.ok() && gx->has_value() && **gx == x;
        // Read something another thread wrote (may or may not exist yet).
        auto other = index.GetFile(H(3, static_cast<uint64_t>(((t + 1) % kThreads) * 1000 + i)));
        ok = ok && other.ok();
        auto found = index.FindXorbsWithChunk(x.chunks[0].hash, std::vector<Scope>{scope}, 5);
        ok = ok && found.ok() && found->size() == 1 && (*found)[0] == x.hash;
        if (i % 5 == 0) ok = ok && index.PutToken(MakeToken(n)).ok();
        if (!ok) failures++;
      }
    });
  }
  for (auto& th : threads) th.join();
  return failures.load();
}

}  // namespace xet::testing::index_test
