// gc_bench_tool populate: fills a node's stores (the backend flags of `xetstore serve`) with
// bucket bench/gc holding N files of one xorb each (real xorbs: 1..4 random 4 KiB chunks; one
// shard per 100 files), then removes the entries of every odd file: N/2 xorbs, files and
// shards become unreachable. Prints one JSON line with what gc must free. For bench/run-gc-bench.
#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cli/node_config.h"
#include "format/sha256.h"
#include "format/shard_writer.h"
#include "format/xorb.h"
#include "store/index_support.h"

namespace xet {
namespace {

constexpr const char* kScope = "bench/gc";
constexpr size_t kFilesPerShard = 100;

struct Populated {
  XorbRecord record;
  FileRecord file;
};

Result<Populated> StoreXorb(uint64_t i, Index& index, ObjectStore& objects) {
  std::mt19937_64 rng(i * 7919 + 1);
  XorbBuilder builder(CompressionPolicy::kNone);
  const size_t chunks = 1 + i % 4;
  std::vector<uint8_t> chunk(4096);
  for (size_t c = 0; c < chunks; ++c) {
    for (auto& b : chunk) b = static_cast<uint8_t>(rng());
    XET_RETURN_IF_ERROR(builder.Add(chunk));
  }
  SerializedXorb x = builder.Finish();
  Populated p;
  p.record = XorbRecordOf(x.hash, x.table, x.bytes.size());
  XET_RETURN_IF_ERROR(objects.Put(XorbKey(x.hash), x.bytes).status());
  XET_RETURN_IF_ERROR(index.PutXorb(p.record, kScope).status());
  const std::string name = "gc-bench-file-" + std::to_string(i);
  p.file.file_hash =
      Hash::FromArray(Sha256Of({reinterpret_cast<const uint8_t*>(name.data()), name.size()}));
  p.file.terms.push_back(
      {x.hash, 0, static_cast<uint32_t>(chunks), x.table.unpacked_offsets.back()});
  p.file.size = x.table.unpacked_offsets.back();
  return p;
}

Status CommitShard(std::span<const Populated> batch, Index& index, ObjectStore& objects) {
  Shard shard;
  ShardCommit commit;
  commit.scope = kScope;
  for (const Populated& p : batch) {
    FileInfo info;
    info.file_hash = p.file.file_hash;
    for (const FileTerm& t : p.file.terms) {
      info.terms.push_back({t.xorb_hash, 0, t.unpacked_bytes, t.chunk_start, t.chunk_end});
    }
    shard.files.push_back(std::move(info));
    commit.files.push_back(p.file);
    commit.xorbs.push_back(p.record.hash);
  }
  XET_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, SerializeShard(shard));
  commit.shard_hash = Hash::FromArray(Sha256Of(bytes));
  XET_RETURN_IF_ERROR(objects.Put(ShardKey(commit.shard_hash), bytes).status());
  return index.CommitShard(commit).status();
}

Status ApplyEntries(Index& index, const std::vector<Populated>& all, bool remove_odd) {
  std::vector<BucketOp> ops;
  auto flush = [&]() -> Status {
    if (ops.empty()) return Status::Ok();
    XET_ASSIGN_OR_RETURN(BucketBatchResult r, index.ApplyBucketBatch("bench", "gc", ops, 1));
    if (r.succeeded != ops.size()) return Status::Internal("a bench batch op failed");
    ops.clear();
    return Status::Ok();
  };
  for (size_t i = 0; i < all.size(); ++i) {
    if (remove_odd && i % 2 == 0) continue;
    BucketOp op;
    op.kind = remove_odd ? BucketOp::Kind::kDeleteFile : BucketOp::Kind::kAddFile;
    op.path = "f/" + std::to_string(i);
    op.file_hash = all[i].file.file_hash;
    ops.push_back(std::move(op));
    if (ops.size() == 1000) XET_RETURN_IF_ERROR(flush());
  }
  return flush();
}

int Populate(const cli::NodeConfig& config, size_t n, size_t threads) {
  auto index = cli::OpenConfiguredIndex(config);
  auto objects = index.ok() ? cli::OpenConfiguredObjects(config)
                            : Result<std::unique_ptr<ObjectStore>>(index.status());
  if (!index.ok() || !objects.ok()) {
    std::fprintf(stderr, "gc_bench_tool: %s\n",
                 (index.ok() ? objects.status() : index.status()).ToString().c_str());
    return 1;
  }
  if (auto b = (*index)->CreateBucket("bench", "gc", true, 1); !b.ok()) {
    std::fprintf(stderr, "gc_bench_tool: %s\n", b.status().ToString().c_str());
    return 1;
  }
  std::vector<Populated> all(n);
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::vector<std::thread> workers;
  for (size_t t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      for (size_t i; (i = next.fetch_add(1)) < n && !failed;) {
        auto p = StoreXorb(i, **index, **objects);
        if (!p.ok()) {
          std::fprintf(stderr, "gc_bench_tool: %s\n", p.status().ToString().c_str());
          failed = true;
          return;
        }
        all[i] = std::move(*p);
      }
    });
  }
  for (auto& w : workers) w.join();
  if (failed) return 1;
  uint64_t unreachable_bytes = 0;
  for (size_t i = 1; i < n; i += 2) unreachable_bytes += all[i].record.object_size;
  for (size_t i = 0; i < n; i += kFilesPerShard) {
    // Odd and even files in separate shards, so half the shards become unreachable.
    for (size_t parity = 0; parity < 2; ++parity) {
      std::vector<Populated> batch;
      for (size_t j = i + parity; j < std::min(n, i + kFilesPerShard); j += 2) {
        batch.push_back(all[j]);
      }
      if (batch.empty()) continue;
      if (Status st = CommitShard(batch, **index, **objects); !st.ok()) {
        std::fprintf(stderr, "gc_bench_tool: %s\n", st.ToString().c_str());
        return 1;
      }
    }
  }
  for (bool remove_odd : {false, true}) {
    if (Status st = ApplyEntries(**index, all, remove_odd); !st.ok()) {
      std::fprintf(stderr, "gc_bench_tool: %s\n", st.ToString().c_str());
      return 1;
    }
  }
  std::printf("%s\n", nlohmann::json{{"xorbs", n},
                                     {"unreachable_xorbs", n / 2},
                                     {"unreachable_bytes", unreachable_bytes},
                                     {"unreachable_files", n / 2}}
                          .dump()
                          .c_str());
  return 0;
}

}  // namespace
}  // namespace xet

int main(int argc, char** argv) {
  CLI::App app{"gc benchmark data: see bench/run-gc-bench"};
  app.require_subcommand(1);
  xet::cli::NodeConfig config;
  size_t xorbs = 10000, threads = 8;
  CLI::App* populate = app.add_subcommand("populate", "Fill the stores (see the file comment)");
  xet::cli::AddNodeOptions(populate, &config, xet::cli::NodeOptions::kStorage);
  populate->add_option("--xorbs", xorbs, "Files, one xorb each")->capture_default_str();
  populate->add_option("--threads", threads, "Concurrent xorb writers")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return xet::Populate(config, xorbs, threads);
}
