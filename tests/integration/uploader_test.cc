// The upload pipeline end to end against a real `xetstore serve`: file hashes equal
// `xetstore hash`'s, uploaded files reconstruct byte for byte, re-uploads send no xorb
// bytes, a 1 % modified version sends about its changed chunks, and an upload interrupted by
// a killed server completes on retry.
#include "client/upload/uploader.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "client/cas/cas_client.h"
#include "client/transport/http_client.h"
#include "format/chunker.h"
#include "format/keyed_hash.h"
#include "format/merkle.h"
#include "format/xorb.h"
#include "support/reference_chunker.h"
#include "support/server_process.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace xet {
namespace {

using testing::ServerProcess;
using testing::TempDir;

std::vector<uint8_t> Random(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> v(n);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint64_t x = rng();
    std::memcpy(v.data() + i, &x, 8);
  }
  for (; i < n; ++i) v[i] = static_cast<uint8_t>(rng());
  return v;
}

void WriteFile(const std::string& path, const std::vector<uint8_t>& data) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

UploadItem FileItem(const std::string& path) {
  UploadItem item;
  item.name = path;
  item.size_hint = std::filesystem::file_size(path);
  item.open = [path] { return OpenFileSource(path); };
  return item;
}

// `xetstore hash` of a file: its Xet file hash and SHA-256 hex.
std::pair<std::string, std::string> CliHash(const std::string& path) {
  const auto r = testing::RunXetstore("hash " + path);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::istringstream in(r.out);
  std::string hash, size, sha;
  in >> hash >> size >> sha;
  return {hash, sha};
}

// The bytes of chunks of `data` not among the chunks of `base`.
uint64_t NewChunkBytes(const std::vector<uint8_t>& base, const std::vector<uint8_t>& data) {
  std::set<Hash> known;
  uint64_t start = 0;
  for (uint64_t end : ChunkBoundaries(base)) {
    known.insert(ChunkHash({base.data() + start, end - start}));
    start = end;
  }
  uint64_t fresh = 0;
  start = 0;
  for (uint64_t end : ChunkBoundaries(data)) {
    if (!known.count(ChunkHash({data.data() + start, end - start}))) fresh += end - start;
    start = end;
  }
  return fresh;
}

class UploaderTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(); }

  void Start() {
    server_ = std::make_unique<ServerProcess>(data_dir_);
    if (token_.empty()) token_ = server_->CreateToken("write", "team/a");
    Connect();
  }

  // A new client for the running server with token_.
  void Connect() {
    HttpClientOptions o;
    o.retry.max_attempts = 3;
    o.retry.base_delay = std::chrono::milliseconds(5);
    o.retry.max_delay = std::chrono::milliseconds(20);
    o.connect_timeout_ms = 2000;
    http_ = std::make_unique<HttpClient>(o);
    tokens_ = MakeStaticTokenSource(XetToken{token_, server_->url() + "/", 0});
    cas_ = std::make_unique<CasClient>(*http_, *tokens_);
  }

  Result<std::vector<UploadedFile>> Upload(const std::vector<std::string>& paths,
                                           UploadOptions options, TransferStats* stats) {
    options.stats = stats;
    std::vector<UploadItem> items;
    for (const auto& p : paths) items.push_back(FileItem(p));
    Uploader up(*cas_, options);
    return up.Upload(items);
  }

  // Rebuilds a file from its reconstruction, fetching each term's range.
  std::vector<uint8_t> Download(const Hash& file_hash) {
    auto recon = cas_->GetReconstruction(file_hash, std::nullopt);
    EXPECT_TRUE(recon.ok()) << recon.status().ToString();
    if (!recon.ok()) return {};
    std::map<Hash, std::map<uint32_t, std::vector<uint8_t>>> chunks;  // xorb -> index -> bytes
    for (const auto& [xorb, entries] : recon->xorbs) {
      auto& xorb_chunks = chunks[xorb];  // (lambdas cannot capture a structured binding)
      for (const FetchEntry& e : entries) {
        for (size_t r = 0; r < e.ranges.size(); ++r) {
          Status s = cas_->FetchRanges(e, r, r, [&](size_t i, std::span<const uint8_t> bytes) {
            ChunkCodec codec;
            for (uint32_t c = e.ranges[i].chunk_start; c < e.ranges[i].chunk_end; ++c) {
              std::vector<uint8_t> out;
              auto n = ExtractXorbChunk(bytes, codec, &out);
              if (!n.ok()) return n.status();
              xorb_chunks[c] = std::move(out);
              bytes = bytes.subspan(*n);
            }
            return Status::Ok();
          });
          EXPECT_TRUE(s.ok()) << s.ToString();
        }
      }
    }
    std::vector<uint8_t> out;
    for (const ReconTerm& t : recon->terms) {
      for (uint32_t c = t.chunk_start; c < t.chunk_end; ++c) {
        const auto& bytes = chunks[t.xorb_hash][c];
        out.insert(out.end(), bytes.begin(), bytes.end());
      }
    }
    out.erase(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(std::min<uint64_t>(
                                             recon->offset_into_first_range, out.size())));
    return out;
  }

  TempDir dir_{"xet-uploader"};
  std::string data_dir_ = dir_.path() + "/server";
  std::string token_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<HttpClient> http_;
  std::unique_ptr<CasTokenSource> tokens_;
  std::unique_ptr<CasClient> cas_;
};

TEST_F(UploaderTest, FilesOfSeveralShapesMatchXetstoreHashAndReconstruct) {
  std::vector<std::vector<uint8_t>> contents;
  contents.push_back({});                  // empty
  contents.push_back(Random(100, 1));      // tiny
  contents.push_back(Random(3 << 20, 2));  // a few MiB
  std::vector<uint8_t> mixed(6 << 20, 0);  // zeros (repeated chunks) ...
  auto tail = Random(4 << 20, 3);          // ... then random
  mixed.insert(mixed.end(), tail.begin(), tail.end());
  contents.push_back(mixed);
  contents.push_back(Random(70 << 20, 4));  // more than one xorb
  std::vector<uint8_t> text;
  for (int i = 0; text.size() < (2 << 20); ++i) {
    const std::string line = "line " + std::to_string(i) + " of a compressible file\n";
    text.insert(text.end(), line.begin(), line.end());
  }
  contents.push_back(text);
  contents.push_back(contents[2]);  // a duplicate file in the same session

  std::vector<std::string> paths;
  for (size_t i = 0; i < contents.size(); ++i) {
    paths.push_back(dir_.path() + "/f" + std::to_string(i));
    WriteFile(paths.back(), contents[i]);
  }
  TransferStats stats;
  UploadOptions options;
  options.hash_threads = 3;
  options.compute_sha256 = true;
  auto r = Upload(paths, options, &stats);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), contents.size());
  for (size_t i = 0; i < contents.size(); ++i) {
    SCOPED_TRACE("file " + std::to_string(i));
    const auto [hash, sha] = CliHash(paths[i]);
    EXPECT_EQ((*r)[i].file_hash.ToHex(), hash);
    EXPECT_EQ(Sha256Hex((*r)[i].sha256), sha);
    EXPECT_EQ((*r)[i].size, contents[i].size());
    if (!contents[i].empty()) {
      EXPECT_TRUE(Download((*r)[i].file_hash) == contents[i]);
    }
  }
  EXPECT_EQ(stats.files_done.load(), contents.size());
  // The duplicate file and the repeated zero chunks were not sent twice.
  EXPECT_GE(stats.bytes_deduped.load(), contents[2].size() + (5 << 20));
}

TEST_F(UploaderTest, ReuploadSendsNoXorbBytes) {
  const auto data = Random(24 << 20, 7);
  const std::string path = dir_.path() + "/a";
  WriteFile(path, data);
  UploadOptions options;
  options.shard_cache_dir = dir_.path() + "/cache";
  TransferStats first;
  auto r1 = Upload({path}, options, &first);
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  EXPECT_GE(first.bytes_sent.load(), data.size());

  // Through the local shard cache.
  TransferStats second;
  auto r2 = Upload({path}, options, &second);
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_EQ((*r2)[0].file_hash, (*r1)[0].file_hash);
  EXPECT_LT(second.bytes_sent.load(), 64u << 10);  // the shard only
  EXPECT_EQ(second.bytes_deduped.load(), data.size());
  EXPECT_EQ((*r2)[0].sha256, Sha256Digest{}) << "SHA-256 is computed only when asked for";

  // Through global dedup alone (no cache): the first chunk's answer names the xorb.
  TransferStats third;
  auto r3 = Upload({path}, UploadOptions{}, &third);
  ASSERT_TRUE(r3.ok()) << r3.status().ToString();
  EXPECT_LT(third.bytes_sent.load(), 64u << 10);
  EXPECT_TRUE(Download((*r3)[0].file_hash) == data);
}

// One large file with no other work: its blocks are chunked by the worker and helper
// threads together (one per idle core, forced here by hash_threads = 1); the result equals
// the sequential `xetstore hash`, also across a run of zeros, where the segments never meet
// the true boundaries and the worker chunks on alone.
TEST_F(UploaderTest, OneLargeFileChunkedAcrossThreadsMatchesTheSequentialHash) {
  auto data = Random(40 << 20, 21);
  std::fill(data.begin() + (9 << 20), data.begin() + (14 << 20), 0);
  const std::string path = dir_.path() + "/big";
  WriteFile(path, data);
  UploadOptions options;
  options.hash_threads = 1;
  options.compute_sha256 = true;
  auto r = Upload({path}, options, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto [hash, sha] = CliHash(path);
  EXPECT_EQ((*r)[0].file_hash.ToHex(), hash);
  EXPECT_EQ(Sha256Hex((*r)[0].sha256), sha);
  EXPECT_TRUE(Download((*r)[0].file_hash) == data);
}

// An update's new chunks are sealed into a xorb of their own once 64 MiB of input went by
// without new chunks, so they are sent while the rest of the file is read: two regions
// changed 77 MiB apart land in two xorbs (one would hold both if sealing waited for the
// file's end), and the file is still whole.
TEST_F(UploaderTest, AnUpdatesNewChunksAreSentWhileTheRestIsRead) {
  auto data = Random(80 << 20, 31);
  const std::string path = dir_.path() + "/model";
  WriteFile(path, data);
  UploadOptions options;
  options.shard_cache_dir = dir_.path() + "/cache";
  ASSERT_TRUE(Upload({path}, options, nullptr).ok());
  auto count_xorbs = [&] {
    size_t n = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(server_->data_dir())) {
      n += e.is_regular_file() && e.path().parent_path().parent_path().filename() == "xorbs";
    }
    return n;
  };
  const size_t before = count_xorbs();
  for (size_t at : {size_t{1} << 20, size_t{78} << 20}) {
    const auto edit = Random(1 << 20, at);
    std::copy(edit.begin(), edit.end(), data.begin() + static_cast<ptrdiff_t>(at));
  }
  WriteFile(path, data);
  TransferStats stats;
  auto r = Upload({path}, options, &stats);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_LT(stats.bytes_sent.load(), 4u << 20);  // the two changed regions and their shard
  EXPECT_EQ(count_xorbs() - before, 2u);
  EXPECT_EQ((*r)[0].file_hash.ToHex(), CliHash(path).first);
  EXPECT_TRUE(Download((*r)[0].file_hash) == data);
}

TEST_F(UploaderTest, AStaleShardCacheCostsBytesNeverCorrectness) {
  const auto data = Random(20 << 20, 17);
  const std::string path = dir_.path() + "/a";
  WriteFile(path, data);
  UploadOptions options;
  options.shard_cache_dir = dir_.path() + "/cache";
  TransferStats first;
  ASSERT_TRUE(Upload({path}, options, &first).ok());

  // The same server, another scope: the cached xorbs exist but this token cannot see them,
  // so a shard must not reference them.
  token_ = server_->CreateToken("write", "team/b");
  Connect();
  TransferStats other_scope;
  auto r2 = Upload({path}, options, &other_scope);
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_GE(other_scope.bytes_sent.load(), data.size());
  EXPECT_TRUE(Download((*r2)[0].file_hash) == data);

  // A wiped server at the same address knows none of the cached xorbs.
  server_.reset();
  data_dir_ = dir_.path() + "/server-after-wipe";
  token_.clear();
  Start();
  TransferStats wiped;
  auto r3 = Upload({path}, options, &wiped);
  ASSERT_TRUE(r3.ok()) << r3.status().ToString();
  EXPECT_GE(wiped.bytes_sent.load(), data.size());
  EXPECT_TRUE(Download((*r3)[0].file_hash) == data);

  // And once the server has the data again, the cache (now holding both servers' shards)
  // dedups everything.
  TransferStats again;
  ASSERT_TRUE(Upload({path}, options, &again).ok());
  EXPECT_LT(again.bytes_sent.load(), 64u << 10);
  EXPECT_EQ(again.bytes_deduped.load(), data.size());
}

TEST_F(UploaderTest, OnePercentChangeSendsAboutTheChangedChunks) {
  const auto base = Random(32 << 20, 9);
  auto changed = base;
  std::mt19937_64 rng(10);
  for (int i = 0; i < 8; ++i) {  // 8 spots of 40 KiB: 1 % of the bytes
    const size_t at = rng() % (changed.size() - 40960);
    for (size_t k = 0; k < 40960; ++k) changed[at + k] = static_cast<uint8_t>(rng());
  }
  const std::string p1 = dir_.path() + "/v1", p2 = dir_.path() + "/v2";
  WriteFile(p1, base);
  WriteFile(p2, changed);
  UploadOptions options;
  options.shard_cache_dir = dir_.path() + "/cache";
  TransferStats s1, s2;
  ASSERT_TRUE(Upload({p1}, options, &s1).ok());
  auto r2 = Upload({p2}, options, &s2);
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  const uint64_t fresh = NewChunkBytes(base, changed);
  EXPECT_GT(fresh, 0u);
  EXPECT_LE(s2.bytes_sent.load(), fresh * 13 / 10 + (64u << 10)) << "fresh chunk bytes " << fresh;
  EXPECT_EQ((*r2)[0].file_hash.ToHex(), CliHash(p2).first);
  EXPECT_TRUE(Download((*r2)[0].file_hash) == changed);
}

// The Xet file hash of `data` by the spec's byte-at-a-time chunker (tests/support), not
// by any code of the uploader.
Hash SpecFileHash(const std::vector<uint8_t>& data) {
  std::vector<ChunkInfo> chunks;
  uint64_t start = 0;
  for (uint64_t end : testing::ReferenceChunkBoundaries(data)) {
    chunks.push_back({ChunkHash({data.data() + start, end - start}), end - start});
    start = end;
  }
  return FileHash(chunks);
}

// Re-uploads take the chunk boundaries of unchanged runs from the dedup index (the chunk
// that followed in an earlier upload, checked by hash and cut) instead of scanning. The
// result must be the spec's chunking whatever the edit: a changed middle, bytes appended
// after what was the last chunk (that chunk ended at the old end of file, not on a cut,
// so it must not be taken as a chunk in the middle of the longer file), a truncation, a
// shift, a prefix, a repetition.
TEST_F(UploaderTest, PredictedBoundariesAreTheSpecsChunksAfterAnyEdit) {
  auto base = Random(20 << 20, 31);
  std::fill(base.begin() + (6 << 20), base.begin() + (6 << 20) + 300000, 0);  // a forced-cut run
  const std::string base_path = dir_.path() + "/base";
  WriteFile(base_path, base);
  UploadOptions options;
  options.shard_cache_dir = dir_.path() + "/cache";
  ASSERT_TRUE(Upload({base_path}, options, nullptr).ok());
  const auto tail = Random(300000, 32);

  std::map<std::string, std::vector<uint8_t>> variants;
  {
    auto v = base;
    std::mt19937_64 rng(33);
    for (int i = 0; i < 3; ++i) {
      const size_t at = rng() % (v.size() - 100000);
      for (size_t k = 0; k < 100000; ++k) v[at + k] = static_cast<uint8_t>(rng());
    }
    variants["changed"] = v;
  }
  {
    auto v = base;
    v.insert(v.end(), tail.begin(), tail.end());
    variants["appended"] = v;
  }
  variants["truncated"] = std::vector<uint8_t>(base.begin(), base.end() - 5000);
  {
    auto v = tail;
    v.resize(4096);
    v.insert(v.end(), base.begin(), base.end());
    variants["shifted"] = v;
  }
  variants["prefix"] = std::vector<uint8_t>(base.begin(), base.begin() + (10 << 20) + 12345);
  {
    auto v = base;
    v.insert(v.end(), base.begin(), base.end());
    variants["twice"] = v;
  }
  for (const auto& [name, data] : variants) {
    const std::string path = dir_.path() + "/" + name;
    WriteFile(path, data);
    TransferStats stats;
    auto r = Upload({path}, options, &stats);
    ASSERT_TRUE(r.ok()) << name << ": " << r.status().ToString();
    EXPECT_EQ((*r)[0].file_hash, SpecFileHash(data)) << name;
    EXPECT_GT(stats.bytes_predicted.load(), data.size() / 4) << name << ": predictions unused";
    EXPECT_TRUE(Download((*r)[0].file_hash) == data) << name;
  }
}

TEST_F(UploaderTest, ServerKilledMidUploadThenRetriedCompletes) {
  const auto data = Random(80 << 20, 11);  // more than one xorb
  const std::string path = dir_.path() + "/big";
  WriteFile(path, data);
  TransferStats stats;
  std::atomic<bool> done{false};
  std::thread killer([&] {
    while (!done && stats.bytes_sent.load() == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!done) server_->Kill();
  });
  UploadOptions options;
  options.upload_concurrency = 2;
  auto r1 = Upload({path}, options, &stats);
  done = true;
  killer.join();
  ASSERT_FALSE(r1.ok());
  EXPECT_GT(stats.bytes_sent.load(), 0u);

  Start();  // same data directory, new port
  TransferStats retry;
  auto r2 = Upload({path}, options, &retry);
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_EQ((*r2)[0].file_hash.ToHex(), CliHash(path).first);
  EXPECT_TRUE(Download((*r2)[0].file_hash) == data);
}

// Manual throughput / memory measurement (not part of the suite):
//   XETSTORE_UPLOAD_BENCH_MB=1024 xetstore_tests --gtest_also_run_disabled_tests
//     --gtest_filter='*DISABLED_Throughput*'
// Prints MB/s of a fresh random file's upload and the client's peak RSS.
TEST_F(UploaderTest, DISABLED_Throughput) {
  const char* env = std::getenv("XETSTORE_UPLOAD_BENCH_MB");
  const size_t mb = env ? std::strtoull(env, nullptr, 10) : 256;
  const std::string path = dir_.path() + "/bench";
  {
    std::ofstream out(path, std::ios::binary);
    for (size_t i = 0; i < mb; ++i) {
      const auto block = Random(1 << 20, 1000 + i);
      out.write(reinterpret_cast<const char*>(block.data()), 1 << 20);
    }
  }
  TransferStats stats;
  struct rusage before {};
  getrusage(RUSAGE_SELF, &before);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = Upload({path}, UploadOptions{}, &stats);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  auto seconds = [](const struct rusage& u) {
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  };
  const double cpu = seconds(ru) - seconds(before);
  std::printf(
      "upload %zu MiB: %.2f s, %.0f MB/s, sent %llu bytes, client CPU %.2f s, client max RSS %ld "
      "MiB\n",
      mb, secs, static_cast<double>(mb << 20) / 1e6 / secs,
      static_cast<unsigned long long>(stats.bytes_sent.load()), cpu, ru.ru_maxrss / 1024);
}

}  // namespace
}  // namespace xet
