// SqliteIndex benchmarks on a fresh database in a temp dir with real fsyncs:
// - shard commit throughput: 400 shards of 4 files (3 terms each) committed concurrently
//   from N threads; counter commits_per_s (durable commits per second, wall clock).
// - GetFile of a 100,000-term file (one row, one blob decode).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "store/sqlite/sqlite_index.h"

namespace xet {
namespace {

namespace fs = std::filesystem;

class BenchDir {
 public:
  BenchDir() {
    std::string tmpl = (fs::temp_directory_path() / "xet-index-bench-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
    path_ = tmpl;
  }
  ~BenchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string db() const { return path_ + "/index.db"; }

 private:
  std::string path_;
};

Hash BenchHash(uint64_t tag, uint64_t n) {
  Hash h;
  const uint64_t w[4] = {tag, n, tag * 31 + n, n * 1024 + 1};
  std::memcpy(h.mutable_data(), w, sizeof(w));
  return h;
}

std::unique_ptr<SqliteIndex> OpenIndex(const std::string& path) {
  auto index = SqliteIndex::Open(path, {});
  if (!index.ok()) {
    std::fprintf(stderr, "open index: %s\n", index.status().ToString().c_str());
    std::abort();
  }
  return std::move(index).value();
}

constexpr int kShards = 400;
constexpr int kFilesPerShard = 4;
constexpr int kTermsPerFile = 3;
constexpr int kXorbs = 32;

void BM_ShardCommitThroughput(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  uint64_t round = 0;
  for (auto _ : state) {
    BenchDir dir;
    auto index = OpenIndex(dir.db());
    std::vector<Hash> xorbs;
    for (int i = 0; i < kXorbs; ++i) {
      XorbRecord x;
      x.hash = BenchHash(1, static_cast<uint64_t>(i));
      for (uint32_t c = 0; c < 16; ++c) x.chunks.push_back({BenchHash(2, c), c * 100, c * 200});
      x.object_size = 1600;
      if (!index->PutXorb(x, "ns/bench").ok()) std::abort();
      xorbs.push_back(x.hash);
    }
    // Shards are built before the clock starts.
    std::vector<ShardCommit> commits(kShards);
    for (int s = 0; s < kShards; ++s) {
      ShardCommit& c = commits[static_cast<size_t>(s)];
      c.shard_hash = BenchHash(3, round * kShards + static_cast<uint64_t>(s));
      c.scope = "ns/bench" + std::to_string(s % 8);
      for (int f = 0; f < kFilesPerShard; ++f) {
        FileRecord file;
        file.file_hash = BenchHash(4, static_cast<uint64_t>(s * kFilesPerShard + f));
        for (int t = 0; t < kTermsPerFile; ++t) {
          const Hash& xh = xorbs[static_cast<size_t>((s + f + t) % kXorbs)];
          file.terms.push_back({xh, 0, 8, 65536});
          file.size += 65536;
          c.xorbs.push_back(xh);
        }
        c.files.push_back(std::move(file));
      }
    }
    std::atomic<int> next{0};
    std::atomic<int> failures{0};
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&] {
        for (int s; (s = next.fetch_add(1)) < kShards;) {
          auto r = index->CommitShard(commits[static_cast<size_t>(s)]);
          if (!r.ok() || *r != ShardCommitResult::kRegistered) failures++;
        }
      });
    }
    for (auto& th : pool) th.join();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (failures.load() != 0) state.SkipWithError("a commit failed");
    state.SetIterationTime(seconds);
    state.counters["commits_per_s"] =
        benchmark::Counter(kShards, benchmark::Counter::kIsIterationInvariantRate);
    const auto stats = index->WriteStats();
    state.counters["ops_per_txn"] =
        static_cast<double>(stats.operations) / static_cast<double>(stats.transactions);
    ++round;
  }
}
BENCHMARK(BM_ShardCommitThroughput)
    ->Arg(1)
    ->Arg(16)
    ->Arg(64)
    ->Arg(400)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

void BM_GetFile100kTerms(benchmark::State& state) {
  BenchDir dir;
  auto index = OpenIndex(dir.db());
  XorbRecord x;
  x.hash = BenchHash(1, 0);
  x.chunks.push_back({BenchHash(2, 0), 100, 200});
  x.object_size = 100;
  if (!index->PutXorb(x, "ns/bench").ok()) std::abort();
  FileRecord file;
  file.file_hash = BenchHash(4, 0);
  for (uint32_t t = 0; t < 100000; ++t) {
    file.terms.push_back({x.hash, t, t + 1, 65536});
    file.size += 65536;
  }
  if (!index->CommitShard({BenchHash(3, 0), "ns/bench", {file}, {x.hash}}).ok()) std::abort();
  for (auto _ : state) {
    auto got = index->GetFile(file.file_hash);
    if (!got.ok() || !got->has_value() || (*got)->terms.size() != 100000) {
      state.SkipWithError("GetFile failed");
      break;
    }
    benchmark::DoNotOptimize(got);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_GetFile100kTerms)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace xet
