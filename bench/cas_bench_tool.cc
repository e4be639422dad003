// CAS server benchmarks (issue 3), each against a real `xetstore serve` child process on
// 127.0.0.1:0 with a temporary --data-dir, driven over loopback HTTP, except the in-process
// parts of `ingest`. Results are JSON objects, one per line, on stdout (bench/run-cas-bench
// turns them into a table); progress goes to stderr. Timings are never asserted here.
//
//   cas_bench_tool recon  [--requests 200] [--only CASE-SUBSTRING] [--perf-dir DIR]
//                         [--index URL | --compare-index URL] [--fill N,N,...]
//       Reconstruction latency: a 100,000-term file over 1,000 xorbs of 1,024 chunks of 64
//       bytes (no compression), "unmerged" (consecutive terms name different xorbs; each
//       xorb's 100 terms are the disjoint runs [10k, 10k+8)) and "merged" (each xorb's 100
//       terms adjacent in the file, runs [10k, 10k+10)). Uploads the xorbs and one shard
//       (verification hashes, file hashes) over HTTP to a setup server, then, per case, starts
//       a fresh server on that data directory and times every request from the first one
//       (no warm-up), one at a time on one keep-alive connection, to the body's last byte:
//       GET /v2/reconstructions of the whole file with a Range trimming 1..64 bytes off each
//       end (so no cached answer applies: built every time), of the whole file without Range
//       (the answer cache serves every request but the first), of random ranges of <= 1 MiB,
//       and GET /v1/reconstructions of the whole file.
//       --index URL: a PostgreSQL index instead of the data directory's SQLite file.
//       --compare-index URL: both, side by side: a SQLite and a PostgreSQL deployment set up
//       alike, their servers up at once, every request sent to each (which goes first
//       alternating), so both see the same load; one row per backend and case.
//       --fill N[,N...]: the cases run once per N, on an index that also holds N synthetic
//       files and N synthetic xorbs (bench/index_fill.h), added level by level by
//       --fill-threads writers (default 64, so that group commits fill the fsyncs).
//   cas_bench_tool ingest [--iterations 10] [--perf-dir DIR]
//       A 64 MiB xorb of 1,024 text-like 64 KiB chunks, LZ4: (a) ParseAndVerifyXorb +
//       footer in process, (b) IngestXorb into a LocalObjectStore + SqliteIndex (durable),
//       (c) POST /v1/xorbs over HTTP.
//   cas_bench_tool commit [--shards 400] [--files-per-shard 4] [--threads 16] [--perf-dir DIR]
//                         [--seed N] [--urls URL,URL,... --token T [--pids PID,PID,...]]
//       Shard commit throughput: distinct shards POSTed to /v1/shards concurrently
//       (--perf-dir: perf record of the server during the commits only, DIR/commit.data).
//       --urls: against running nodes (bench/run-multinode-bench) instead of a fresh server;
//       client thread t posts to node t % nodes, the xorbs go through the first; --token is
//       a write token of the shards' scope, --pids the processes whose CPU is reported;
//       --seed makes other xorbs (and so other shards) for a second run on the same nodes.
//   cas_bench_tool wrk --lua bench/wrk-reconstructions.lua [--duration 30] [--connections 64]
//                      [--wrk-threads 2]
//       Runs wrk against GET /v2/reconstructions/<id> of a few small files.
//
// Common: --xetstore PATH (default: `xetstore` beside this executable).
#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench_data.h"
#include "cas_bench_support.h"
#include "format/keyed_hash.h"
#include "format/merkle.h"
#include "format/shard_types.h"
#include "format/shard_writer.h"
#include "format/xorb.h"
#include "format/xorb_footer.h"
#include "index_fill.h"
#include "server/cas/xorb_ingest.h"
#include "store/index.h"
#include "store/object_store.h"

namespace xet::bench {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

using Options = ToolOptions;

// ---------------------------------------------------------------------------------------
// Test data

uint64_t SplitMix(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void FillRandom(uint64_t seed, std::span<uint8_t> out) {
  uint64_t state = seed;
  for (size_t i = 0; i < out.size(); i += 8) {
    const uint64_t v = SplitMix(state);
    std::memcpy(out.data() + i, &v, std::min<size_t>(8, out.size() - i));
  }
}

// `num_xorbs` xorbs of `chunks` random chunks of `chunk_bytes`, stored uncompressed.
std::vector<SerializedXorb> BuildRandomXorbs(size_t num_xorbs, size_t chunks, size_t chunk_bytes,
                                             uint64_t seed) {
  std::vector<SerializedXorb> out(num_xorbs);
  std::vector<uint8_t> chunk(chunk_bytes);
  XorbBuilder builder(CompressionPolicy::kNone);
  for (size_t x = 0; x < num_xorbs; ++x) {
    for (size_t i = 0; i < chunks; ++i) {
      FillRandom(seed ^ (x * 1'000'003 + i * 7919 + 1), chunk);
      if (!builder.Add(chunk).ok()) throw std::runtime_error("XorbBuilder::Add failed");
    }
    out[x] = builder.Finish();
  }
  return out;
}

struct TermSpec {
  uint32_t xorb, start, end;
};

// A file info (with verification entries) whose terms are `terms` over `xorbs`.
FileInfo MakeFile(const std::vector<SerializedXorb>& xorbs, const std::vector<TermSpec>& terms,
                  uint64_t* size) {
  FileInfo f;
  f.flags = kFileFlagWithVerification;
  std::vector<ChunkInfo> all;
  std::vector<Hash> term_hashes;
  *size = 0;
  for (const TermSpec& t : terms) {
    const XorbChunkTable& table = xorbs[t.xorb].table;
    const uint32_t base = t.start == 0 ? 0 : table.unpacked_offsets[t.start - 1];
    FileDataSequenceEntry e;
    e.cas_hash = xorbs[t.xorb].hash;
    e.unpacked_segment_bytes = table.unpacked_offsets[t.end - 1] - base;
    e.chunk_index_start = t.start;
    e.chunk_index_end = t.end;
    f.terms.push_back(e);
    term_hashes.clear();
    for (uint32_t i = t.start; i < t.end; ++i) {
      term_hashes.push_back(table.chunks[i].hash);
      all.push_back(table.chunks[i]);
    }
    f.verification.push_back({VerificationHash(term_hashes), {}});
    *size += e.unpacked_segment_bytes;
  }
  f.file_hash = FileHash(all);
  return f;
}

std::vector<uint8_t> UploadShardBytes(std::vector<FileInfo> files) {
  Shard shard;
  shard.files = std::move(files);
  auto bytes = SerializeShardForUpload(shard);
  if (!bytes.ok())
    throw std::runtime_error("SerializeShardForUpload: " + bytes.status().ToString());
  return std::move(*bytes);
}

void Expect200(const HttpResponse& r, const std::string& what) {
  if (r.status != 200) {
    throw std::runtime_error(what + ": HTTP " + std::to_string(r.status) + " " +
                             r.body.substr(0, 400));
  }
}

// POSTs every xorb with `threads` keep-alive clients.
void UploadXorbs(const std::string& url, const std::string& token,
                 const std::vector<SerializedXorb>& xorbs, size_t threads) {
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::string error;
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      try {
        HttpClient http;
        for (size_t i = next++; i < xorbs.size(); i = next++) {
          const auto& x = xorbs[i];
          Expect200(http.Request("POST", url + "/v1/xorbs/default/" + x.hash.ToHex(),
                                 {Bearer(token)}, x.bytes),
                    "xorb upload");
        }
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mu);
        error = e.what();
        next = xorbs.size();
      }
    });
  }
  for (auto& t : pool) t.join();
  if (!error.empty()) throw std::runtime_error(error);
}

// ---------------------------------------------------------------------------------------
// recon

constexpr uint32_t kReconXorbs = 1000;
constexpr uint32_t kReconChunks = 1024;
constexpr uint32_t kReconTerms = 100000;
constexpr uint32_t kReconTermsPerXorb = kReconTerms / kReconXorbs;
constexpr size_t kReconChunkBytes = 64;
constexpr uint64_t kMaxRangeBytes = 1 << 20;  // random ranges: 1 B .. 1 MiB (~1,600 terms)

// The answer-cache counter `result` ("hit" or "miss") from the server's /metrics.
uint64_t AnswerCacheCount(HttpClient& http, const ServerProcess& server, const char* result) {
  const auto r = http.Request("GET", server.url() + "/metrics", {});
  Expect200(r, "metrics");
  const std::string key = std::string("xetstore_answer_cache_total{result=\"") + result + "\"} ";
  const size_t at = r.body.find(key);
  return at == std::string::npos ? 0 : std::stoull(r.body.substr(at + key.size()));
}

// How a recon case picks each request's Range header.
enum class ReconRange {
  kNone,     // the whole file, no Range: after the first request, the answer cache serves it
  kTrimmed,  // the whole file but 1..64 bytes off each end: built afresh every time
  kRandom,   // 1 B .. 1 MiB at a uniformly random start
};

void RunRecon(const Options& opts) {
  const size_t requests = opts.GetSize("requests", 200);
  const std::string perf_dir = opts.Get("perf-dir", "");
  const auto t_build = Clock::now();
  const auto xorbs = BuildRandomXorbs(kReconXorbs, kReconChunks, kReconChunkBytes, 0x5eed);
  std::vector<TermSpec> unmerged_terms, merged_terms;
  for (uint32_t t = 0; t < kReconTerms; ++t) {
    const uint32_t k = t / kReconXorbs;
    unmerged_terms.push_back({t % kReconXorbs, 10 * k, 10 * k + 8});
  }
  for (uint32_t t = 0; t < kReconTerms; ++t) {
    const uint32_t k = t % kReconTermsPerXorb;
    merged_terms.push_back({t / kReconTermsPerXorb, 10 * k, 10 * k + 10});
  }
  uint64_t unmerged_size = 0, merged_size = 0;
  FileInfo unmerged = MakeFile(xorbs, unmerged_terms, &unmerged_size);
  FileInfo merged = MakeFile(xorbs, merged_terms, &merged_size);
  const std::string unmerged_id = unmerged.file_hash.ToHex();
  const std::string merged_id = merged.file_hash.ToHex();
  const auto shard = UploadShardBytes({std::move(unmerged), std::move(merged)});
  Log("built 1,000 xorbs and a " + std::to_string(shard.size()) + "-byte shard in " +
      std::to_string(static_cast<int>(MsSince(t_build))) + " ms");

  TempDir dir("recon");
  const std::string xetstore = opts.Get("xetstore", "");
  // The backends the cases run on: the SQLite index of a data directory; --index URL: a
  // PostgreSQL index instead; --compare-index URL: both, side by side (servers up at once,
  // each request sent to one then the other, alternating which goes first, so both see the
  // same load). The objects stay in each backend's data directory.
  struct Backend {
    std::string name;
    std::string data_dir;
    std::string index_url;
    std::string reader;  // a read token of this backend's index
  };
  std::vector<Backend> backends;
  if (const std::string compare = opts.Get("compare-index", ""); !compare.empty()) {
    backends.push_back({"sqlite", dir.path() + "/data-sqlite", "", ""});
    backends.push_back({"postgres", dir.path() + "/data-postgres", compare, ""});
  } else {
    const std::string index_url = opts.Get("index", "");
    backends.push_back(
        {index_url.empty() ? "sqlite" : "postgres", dir.path() + "/data", index_url, ""});
  }
  for (Backend& b : backends) {
    // Setup on a server of its own, stopped before the timed cases: each case starts a fresh
    // server on this data directory, so its first request is the first after a start.
    ServerProcess server(xetstore, b.data_dir, b.index_url);
    const std::string writer = server.CreateToken("write", "bench/recon");
    b.reader = server.CreateToken("read", "bench/recon");
    const auto t_upload = Clock::now();
    UploadXorbs(server.url(), writer, xorbs, 4);
    const double xorbs_ms = MsSince(t_upload);
    HttpClient http;
    const auto t_shard = Clock::now();
    auto r = http.Request("POST", server.url() + "/v1/shards", {Bearer(writer)}, shard);
    Expect200(r, "shard upload");
    const double shard_ms = MsSince(t_shard);
    Log(b.name + ": uploaded 1,000 xorbs in " + std::to_string(static_cast<int>(xorbs_ms)) +
        " ms, the shard in " + std::to_string(static_cast<int>(shard_ms)) + " ms");
    Emit({{"bench", "recon_setup"},
          {"index", b.name},
          {"xorb_upload_ms", xorbs_ms},
          {"shard_bytes", shard.size()},
          {"shard_commit_ms", shard_ms}});

    // Sanity: both answers are complete.
    for (const auto& [id, name] : {std::pair{unmerged_id, "unmerged"}, {merged_id, "merged"}}) {
      r = http.Request("GET", server.url() + "/v2/reconstructions/" + id, {Bearer(b.reader)});
      Expect200(r, "reconstruction");
      const json j = json::parse(r.body);
      size_t ranges = 0;
      for (const auto& [x, entries] : j["xorbs"].items()) {
        for (const auto& e : entries) ranges += e["ranges"].size();
      }
      if (j["terms"].size() != kReconTerms || j["xorbs"].size() != kReconXorbs) {
        throw std::runtime_error(std::string("unexpected reconstruction for ") + name);
      }
      Emit({{"bench", "recon_shape"},
            {"shape", name},
            {"terms", j["terms"].size()},
            {"xorbs", j["xorbs"].size()},
            {"fetch_ranges", ranges},
            {"v2_body_bytes", r.body.size()}});
    }
  }

  struct Case {
    std::string name, version, id;
    uint64_t size;
    ReconRange range;
    double target_p99_ms;
  };
  std::vector<Case> cases = {
      {"v2 full, unmerged (uncached: trimmed Range)", "v2", unmerged_id, unmerged_size,
       ReconRange::kTrimmed, 25},
      {"v2 full, merged (uncached: trimmed Range)", "v2", merged_id, merged_size,
       ReconRange::kTrimmed, 15},
      {"v2 full, unmerged (answer cache)", "v2", unmerged_id, unmerged_size, ReconRange::kNone, 25},
      {"v2 full, merged (answer cache)", "v2", merged_id, merged_size, ReconRange::kNone, 15},
      {"v2 random range, unmerged", "v2", unmerged_id, unmerged_size, ReconRange::kRandom, 5},
      {"v2 random range, merged", "v2", merged_id, merged_size, ReconRange::kRandom, 5},
      {"v1 full, unmerged (answer cache)", "v1", unmerged_id, unmerged_size, ReconRange::kNone, 50},
  };
  if (const std::string only = opts.Get("only", ""); !only.empty()) {  // e.g. --only v1
    std::erase_if(cases, [&](const Case& c) { return c.name.find(only) == std::string::npos; });
  }
  // --fill N[,N...]: the cases run once per level, on an index that also holds N synthetic
  // files and N synthetic xorbs (bench/index_fill.h), added level by level.
  std::vector<uint64_t> levels;
  {
    std::stringstream list(opts.Get("fill", ""));
    for (std::string n; std::getline(list, n, ',');) levels.push_back(std::stoull(n));
  }
  if (levels.empty()) levels.push_back(0);
  uint64_t filled = 0;
  std::mt19937_64 rng(42);
  int case_no = 0;
  for (const uint64_t level : levels) {
    if (level > filled) {
      for (const Backend& b : backends) {
        auto index = b.index_url.empty() ? OpenSqliteIndex(b.data_dir + "/index.sqlite")
                                         : OpenPostgresIndex(b.index_url);
        if (!index.ok()) throw std::runtime_error("open the index: " + index.status().ToString());
        const auto t_fill = Clock::now();
        FillIndex(**index, filled, level, static_cast<unsigned>(opts.GetSize("fill-threads", 64)));
        Log(b.name + ": filled the index to " + std::to_string(level) + " files and xorbs in " +
            std::to_string(static_cast<int>(MsSince(t_fill) / 1000)) + " s");
        Emit({{"bench", "recon_fill"},
              {"index", b.name},
              {"files", level},
              {"xorbs", level},
              {"fill_ms", MsSince(t_fill)}});
      }
      filled = level;
    }
    for (const Case& c : cases) {
      auto headers_for = [&](const Backend& b, uint64_t start, uint64_t end) {
        std::vector<std::string> h = {Bearer(b.reader)};
        if (c.range != ReconRange::kNone) {
          h.push_back("Range: bytes=" + std::to_string(start) + "-" + std::to_string(end));
        }
        return h;
      };
      // No warm-up: fresh servers (empty caches, new index connections, worker threads that
      // have not allocated yet) and new connections, and the first request is timed.
      struct Run {
        std::unique_ptr<ServerProcess> server;
        double start_ms = 0, start_rss_mib = 0, cpu0 = 0;
        HttpClient http;
        std::vector<double> ms;
        size_t bytes = 0;
      };
      std::vector<Run> runs(backends.size());
      for (size_t k = 0; k < backends.size(); ++k) {
        const auto t_start = Clock::now();
        runs[k].server =
            std::make_unique<ServerProcess>(xetstore, backends[k].data_dir, backends[k].index_url);
        runs[k].start_ms = MsSince(t_start);
        runs[k].start_rss_mib = ProcessRssMiB(runs[k].server->pid());
        runs[k].cpu0 = ProcessCpuMs(runs[k].server->pid());
      }
      {
        PerfRecording perf(
            runs[0].server->pid(),
            perf_dir.empty() ? "" : perf_dir + "/recon-" + std::to_string(++case_no) + ".data");
        for (size_t i = 0; i < requests; ++i) {
          // One range per round, the same for every backend (outside the timed spans).
          uint64_t start = 0, end = c.size - 1;
          if (c.range == ReconRange::kTrimmed) {
            start = 1 + rng() % 64;
            end = c.size - 2 - rng() % 64;
          } else if (c.range == ReconRange::kRandom) {
            start = rng() % c.size;
            end = std::min(c.size - 1, start + rng() % kMaxRangeBytes);
          }
          for (size_t j = 0; j < runs.size(); ++j) {
            const size_t k = (i + j) % runs.size();  // who goes first alternates
            Run& run = runs[k];
            const auto headers = headers_for(backends[k], start, end);
            const std::string url =
                run.server->url() + "/" + c.version + "/reconstructions/" + c.id;
            const auto t0 = Clock::now();
            const auto res = run.http.Request("GET", url, headers, {}, false);
            run.ms.push_back(MsSince(t0));
            if (res.status != 200) {
              throw std::runtime_error(c.name + ": HTTP " + std::to_string(res.status));
            }
            run.bytes += res.body_bytes;
          }
        }
      }
      for (size_t k = 0; k < runs.size(); ++k) {
        Run& run = runs[k];
        ServerProcess& server = *run.server;
        const double server_cpu_ms = ProcessCpuMs(server.pid()) - run.cpu0;
        // The uncached cases must not have been answered from the answer cache.
        const uint64_t cache_hits = AnswerCacheCount(run.http, server, "hit");
        if (c.range != ReconRange::kNone && cache_hits != 0) {
          throw std::runtime_error(c.name + ": " + std::to_string(cache_hits) +
                                   " answer-cache hits");
        }
        // What the server did at start before listening (its cache warm-up line), if anything.
        std::string warm_up;
        const std::string server_log = server.Log();
        if (std::smatch m;
            std::regex_search(server_log, m, std::regex("xetstore: (cached [^\n]*)"))) {
          warm_up = m[1];
        }
        const Summary s = Summarize(run.ms);
        Emit({{"bench", "recon"},
              {"case", c.name},
              {"index", backends[k].name},
              {"side_by_side", runs.size() > 1},
              {"filler_files", filled},
              {"unit", "ms"},
              {"stats", ToJson(s)},
              {"first_ms", run.ms.front()},
              {"head_ms", std::vector<double>(run.ms.begin(),
                                              run.ms.begin() + std::min<size_t>(5, run.ms.size()))},
              {"server_start_ms", run.start_ms},
              {"server_rss_mib_at_start", run.start_rss_mib},
              {"server_rss_mib_at_end", ProcessRssMiB(server.pid())},
              {"server_warm_up", warm_up},
              {"answer_cache_hits", cache_hits},
              {"server_cpu_ms_per_request", server_cpu_ms / static_cast<double>(requests)},
              {"mean_body_bytes", run.bytes / std::max<size_t>(1, requests)},
              {"target", "p99 <= " + std::to_string(static_cast<int>(c.target_p99_ms)) + " ms"},
              {"met", s.p99 <= c.target_p99_ms},
              {"machine", Machine()}});
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// ingest

constexpr size_t kIngestChunks = 1024;
constexpr size_t kIngestChunkBytes = 64 * 1024;

class IngestCorpus {
 public:
  IngestCorpus() : text_(MakeText(kIngestChunks * kIngestChunkBytes)) {
    for (size_t i = 0; i < kIngestChunks; ++i) hashes_.push_back(ChunkHash(Chunk(i)));
  }

  // A distinct xorb per `variant`: chunk 0 starts with the variant number.
  SerializedXorb Build(uint64_t variant) {
    std::vector<uint8_t> first(Chunk(0).begin(), Chunk(0).end());
    const std::string tag = "variant " + std::to_string(variant) + " ";
    std::memcpy(first.data(), tag.data(), tag.size());
    XorbBuilder b(CompressionPolicy::kLz4);
    if (!b.Add(first).ok()) throw std::runtime_error("Add failed");
    for (size_t i = 1; i < kIngestChunks; ++i) {
      if (!b.Add(Chunk(i), hashes_[i]).ok()) throw std::runtime_error("Add failed");
    }
    return b.Finish();
  }

 private:
  std::span<const uint8_t> Chunk(size_t i) const {
    return std::span<const uint8_t>(text_).subspan(i * kIngestChunkBytes, kIngestChunkBytes);
  }
  std::vector<uint8_t> text_;
  std::vector<Hash> hashes_;
};

void EmitIngest(const std::string& name, const std::vector<double>& ms, double target_ms,
                size_t xorb_bytes, const std::vector<double>& cpu_ms = {}) {
  const Summary s = Summarize(ms);
  json j = {{"bench", "ingest"},
            {"case", name},
            {"unit", "ms"},
            {"stats", ToJson(s)},
            {"xorb_bytes", xorb_bytes},
            {"raw_bytes", kIngestChunks * kIngestChunkBytes},
            {"machine", Machine()}};
  if (!cpu_ms.empty()) j["thread_cpu_ms"] = ToJson(Summarize(cpu_ms));
  if (target_ms > 0) {
    j["target"] = "p50 <= " + std::to_string(static_cast<int>(target_ms)) + " ms";
    j["met"] = s.p50 <= target_ms;
  }
  Emit(j);
}

void RunIngest(const Options& opts) {
  const size_t iterations = opts.GetSize("iterations", 10);
  IngestCorpus corpus;
  const SerializedXorb base = corpus.Build(0);
  Log("64 MiB xorb, LZ4: " + std::to_string(base.bytes.size()) + " bytes serialized");

  // (a) verification + footer, in process (IngestXorb's CPU work).
  {
    std::vector<double> ms, cpu;
    for (size_t i = 0; i < iterations + 2; ++i) {
      const double c0 = ThreadCpuMs();
      const auto t0 = Clock::now();
      auto v = ParseAndVerifyXorb(base.bytes, base.hash, XorbTrailingBytes::kReject);
      if (!v.ok()) throw std::runtime_error(v.status().ToString());
      // The footer is serialized on its own, as IngestXorb does: the object store writes
      // body and footer as two pieces, so the body is never copied.
      const XorbFooter footer = MakeXorbFooter(v->hash, v->table, {1, 2, 3, 4});
      std::vector<uint8_t> footer_bytes;
      footer_bytes.reserve(XorbFooterInfoLength(v->table.size()) + 4);
      if (!AppendXorbFooter(footer, &footer_bytes).ok()) throw std::runtime_error("footer");
      const double t = MsSince(t0);
      if (i >= 2) {  // two warm-up rounds
        ms.push_back(t);
        cpu.push_back(ThreadCpuMs() - c0);
      }
    }
    EmitIngest("(a) ParseAndVerifyXorb + footer (in process)", ms, 40, base.bytes.size(), cpu);
  }

  // (b) IngestXorb into a LocalObjectStore + SqliteIndex: the durable path.
  {
    TempDir dir("ingest");
    auto index = OpenSqliteIndex(dir.path() + "/index.sqlite");
    auto objects = OpenLocalObjectStore(dir.path() + "/objects");
    if (!index.ok() || !objects.ok()) throw std::runtime_error("cannot open the stores");
    // A server that has run for a while has all 256 xorbs/<xx>/ directories (made durable
    // once per process); create them first so each timed ingest is steady state.
    std::vector<uint8_t> tiny(16, 0);
    for (int p = 0; p < 256; ++p) {
      char hex[3];
      std::snprintf(hex, sizeof(hex), "%02x", p);
      std::string key = "xorbs/" + std::string(hex) + "/" + std::string(hex) + std::string(62, '0');
      if (!(*objects)->Put(key, tiny).ok()) throw std::runtime_error("warm-up put " + key);
    }
    if (!IngestXorb(base.hash, base.bytes, "bench", **index, **objects).ok()) {
      throw std::runtime_error("warm-up ingest failed");
    }
    std::vector<double> ms, cpu;
    for (size_t i = 0; i < iterations; ++i) {
      const SerializedXorb x = corpus.Build(1000 + i);  // untimed
      const double c0 = ThreadCpuMs();
      const auto t0 = Clock::now();
      auto r = IngestXorb(x.hash, x.bytes, "bench", **index, **objects);
      const double t = MsSince(t0);
      cpu.push_back(ThreadCpuMs() - c0);  // this thread only (not SQLite's writer thread)
      if (!r.ok() || !r->inserted) throw std::runtime_error("IngestXorb: " + r.status().ToString());
      ms.push_back(t);
    }
    EmitIngest("(b) IngestXorb: verify + footer + fsync'd object + SQLite commit", ms, 80,
               base.bytes.size(), cpu);
  }

  // (c) POST /v1/xorbs over loopback HTTP, for reference.
  {
    TempDir dir("ingest-http");
    ServerProcess server(opts.Get("xetstore", ""), dir.path() + "/data");
    const std::string writer = server.CreateToken("write", "bench/ingest");
    HttpClient http;
    auto post = [&](const SerializedXorb& x) {
      const auto t0 = Clock::now();
      auto r = http.Request("POST", server.url() + "/v1/xorbs/default/" + x.hash.ToHex(),
                            {Bearer(writer)}, x.bytes);
      const double t = MsSince(t0);
      Expect200(r, "xorb upload");
      return t;
    };
    post(base);  // warm-up
    std::vector<SerializedXorb> xorbs;
    for (size_t i = 0; i < iterations; ++i) xorbs.push_back(corpus.Build(2000 + i));
    const std::string perf_dir = opts.Get("perf-dir", "");
    PerfRecording perf(server.pid(), perf_dir.empty() ? "" : perf_dir + "/ingest-http.data");
    std::vector<double> ms, cpu;
    for (const SerializedXorb& x : xorbs) {
      const double c0 = ProcessCpuMs(server.pid());
      ms.push_back(post(x));
      cpu.push_back(ProcessCpuMs(server.pid()) - c0);  // the server's CPU, 10 ms resolution
    }
    EmitIngest("(c) POST /v1/xorbs over loopback HTTP (reference)", ms, 0, base.bytes.size(), cpu);
  }
}

// ---------------------------------------------------------------------------------------
// commit

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = std::min(s.find(',', start), s.size());
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

void RunCommit(const Options& opts) {
  const size_t num_shards = opts.GetSize("shards", 400);
  const size_t files_per_shard = opts.GetSize("files-per-shard", 4);
  const size_t threads = opts.GetSize("threads", 16);
  constexpr uint32_t kXorbs = 16, kChunks = 1024, kRuns = 100;  // runs [10k, 10k+10)
  const auto xorbs = BuildRandomXorbs(kXorbs, kChunks, 64, 0xc0ffee + opts.GetSize("seed", 0));
  // File f: 4 terms over 4 different xorbs; (f % 16, f / 16) makes every file distinct.
  const size_t num_files = num_shards * files_per_shard;
  if (num_files > kXorbs * kRuns * kRuns) throw std::runtime_error("too many files");
  std::vector<std::vector<uint8_t>> shards;
  for (size_t s = 0; s < num_shards; ++s) {
    std::vector<FileInfo> files;
    for (size_t j = 0; j < files_per_shard; ++j) {
      const size_t f = s * files_per_shard + j;
      const auto base = static_cast<uint32_t>(f % kXorbs);
      const auto k = static_cast<uint32_t>(f / kXorbs);
      std::vector<TermSpec> terms;
      for (uint32_t t = 0; t < 4; ++t) {
        const uint32_t run = (k + t * (k / kRuns + 1)) % kRuns;
        terms.push_back({(base + t) % kXorbs, 10 * run, 10 * run + 10});
      }
      uint64_t size = 0;
      files.push_back(MakeFile(xorbs, terms, &size));
    }
    shards.push_back(UploadShardBytes(std::move(files)));
  }

  // Either a fresh server of our own, or (--urls) nodes started by the caller, with --token
  // (write on the scope the shards go to) and --pids (whose CPU is counted).
  std::optional<TempDir> dir;
  std::optional<ServerProcess> server;
  std::vector<std::string> urls = SplitCommas(opts.Get("urls", ""));
  std::vector<pid_t> pids;
  std::string writer;
  if (urls.empty()) {
    dir.emplace("commit");
    server.emplace(opts.Get("xetstore", ""), dir->path() + "/data");
    writer = server->CreateToken("write", "bench/commit");
    urls = {server->url()};
    pids = {server->pid()};
  } else {
    writer = opts.Get("token", "");
    if (writer.empty()) throw std::runtime_error("--urls needs --token");
    for (const std::string& p : SplitCommas(opts.Get("pids", ""))) {
      pids.push_back(static_cast<pid_t>(std::stol(p)));
    }
  }
  UploadXorbs(urls[0], writer, xorbs, 4);
  const auto cpu_now = [&] {
    double ms = 0;
    for (pid_t p : pids) ms += ProcessCpuMs(p);
    return ms;
  };

  std::atomic<size_t> next{0};
  std::mutex mu;
  std::string error;
  std::vector<double> latencies;
  std::vector<std::thread> pool;
  const std::string perf_dir = opts.Get("perf-dir", "");
  std::optional<PerfRecording> perf;
  if (server) perf.emplace(server->pid(), perf_dir.empty() ? "" : perf_dir + "/commit.data");
  const double cpu0 = cpu_now();
  const auto t0 = Clock::now();
  for (size_t t = 0; t < threads; ++t) {
    // Client thread t always talks to node t % nodes: the load is spread evenly.
    pool.emplace_back([&, url = urls[t % urls.size()]] {
      std::vector<double> mine;
      try {
        HttpClient http;
        for (size_t i = next++; i < shards.size(); i = next++) {
          const auto t1 = Clock::now();
          auto r = http.Request("POST", url + "/v1/shards", {Bearer(writer)}, shards[i]);
          mine.push_back(MsSince(t1));
          Expect200(r, "shard upload");
          if (json::parse(r.body).value("result", -1) != 1) {
            throw std::runtime_error("shard not newly registered: " + r.body);
          }
        }
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mu);
        error = e.what();
        next = shards.size();
      }
      std::lock_guard<std::mutex> lock(mu);
      latencies.insert(latencies.end(), mine.begin(), mine.end());
    });
  }
  for (auto& t : pool) t.join();
  const double wall_ms = MsSince(t0);
  const double server_cpu_ms = cpu_now() - cpu0;
  perf.reset();  // stop recording before the server shuts down
  if (!error.empty()) throw std::runtime_error(error);
  const double per_s = static_cast<double>(num_shards) / (wall_ms / 1000.0);
  std::string name = std::to_string(num_shards) + " shards x " + std::to_string(files_per_shard) +
                     " files, " + std::to_string(threads) + " client threads";
  if (!server) name += ", " + std::to_string(urls.size()) + " nodes";
  Emit({{"bench", "commit"},
        {"case", name},
        {"shards", num_shards},
        {"wall_ms", wall_ms},
        {"commits_per_s", per_s},
        {"shard_bytes", shards[0].size()},
        {"server_cpu_ms_per_commit", server_cpu_ms / static_cast<double>(num_shards)},
        {"latency_ms", ToJson(Summarize(latencies))},
        {"target", "commits/s >= 1000"},
        {"met", per_s >= 1000},
        {"machine", Machine()}});
}

// ---------------------------------------------------------------------------------------
// wrk

double WrkDurationMs(const std::string& value, const std::string& unit) {
  const double v = std::stod(value);
  if (unit == "us") return v / 1000;
  if (unit == "ms") return v;
  if (unit == "s") return v * 1000;
  if (unit == "m") return v * 60000;
  throw std::runtime_error("unknown wrk unit " + unit);
}

void RunWrk(const Options& opts) {
  const std::string lua = opts.Get("lua", "bench/wrk-reconstructions.lua");
  const size_t duration = opts.GetSize("duration", 30);
  const size_t connections = opts.GetSize("connections", 64);
  const size_t wrk_threads = opts.GetSize("wrk-threads", 2);
  constexpr size_t kFiles = 8;
  // Small files: one xorb of 16 random 4 KiB chunks each, read as a 2-term file.
  const auto xorbs = BuildRandomXorbs(kFiles, 16, 4096, 0x77);
  std::vector<FileInfo> files;
  std::string ids;
  for (uint32_t f = 0; f < kFiles; ++f) {
    uint64_t size = 0;
    files.push_back(MakeFile(xorbs, {{f, 0, 8}, {f, 8, 16}}, &size));
    ids += (f ? "," : "") + files.back().file_hash.ToHex();
  }
  const auto shard = UploadShardBytes(std::move(files));

  TempDir dir("wrk");
  ServerProcess server(opts.Get("xetstore", ""), dir.path() + "/data");
  const std::string writer = server.CreateToken("write", "bench/wrk");
  const std::string reader = server.CreateToken("read", "bench/wrk");
  UploadXorbs(server.url(), writer, xorbs, 2);
  HttpClient http;
  Expect200(http.Request("POST", server.url() + "/v1/shards", {Bearer(writer)}, shard), "shard");
  const std::string first = ids.substr(0, ids.find(','));
  Expect200(http.Request("GET", server.url() + "/v2/reconstructions/" + first, {Bearer(reader)}),
            "reconstruction");

  const std::string command = "wrk -t" + std::to_string(wrk_threads) + " -c" +
                              std::to_string(connections) + " -d" + std::to_string(duration) +
                              "s --latency -s " + lua + " " + server.url();
  ::setenv("XETSTORE_BENCH_TOKEN", reader.c_str(), 1);
  ::setenv("XETSTORE_BENCH_FILES", ids.c_str(), 1);
  Log("running: " + command);
  const double cpu0 = ProcessCpuMs(server.pid());
  const std::string out = RunCapture(command + " 2>&1");
  const double server_cpu_ms = ProcessCpuMs(server.pid()) - cpu0;
  std::fprintf(stderr, "%s", out.c_str());

  std::smatch m;
  double rps = 0, p99_ms = -1;
  uint64_t total = 0, non2xx = 0, socket_errors = 0;
  if (std::regex_search(out, m, std::regex(R"(Requests/sec:\s+([0-9.]+))"))) {
    rps = std::stod(m[1]);
  }
  if (std::regex_search(out, m, std::regex(R"(\s99%\s+([0-9.]+)(us|ms|s|m)\b)"))) {
    p99_ms = WrkDurationMs(m[1], m[2]);
  }
  if (std::regex_search(out, m, std::regex(R"((\d+) requests in)"))) total = std::stoull(m[1]);
  if (std::regex_search(out, m, std::regex(R"(Non-2xx or 3xx responses:\s+(\d+))"))) {
    non2xx = std::stoull(m[1]);
  }
  if (std::regex_search(
          out, m,
          std::regex(R"(Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+))"))) {
    for (int i = 1; i <= 4; ++i) socket_errors += std::stoull(m[static_cast<size_t>(i)]);
  }
  Emit({{"bench", "wrk"},
        {"case", "GET /v2/reconstructions (small files), " + std::to_string(connections) +
                     " connections, " + std::to_string(duration) + " s"},
        {"command", "XETSTORE_BENCH_TOKEN=<read token> XETSTORE_BENCH_FILES=<8 ids> " + command},
        {"requests", total},
        {"requests_per_s", rps},
        {"server_cpu_ms_per_request", total ? server_cpu_ms / static_cast<double>(total) : 0.0},
        {"server_cpu_share", server_cpu_ms / (static_cast<double>(duration) * 1000.0)},
        {"p99_ms", p99_ms},
        {"non_2xx", non2xx},
        {"socket_errors", socket_errors},
        {"target", "req/s >= 5000, p99 <= 50 ms, 0 errors"},
        {"met", rps >= 5000 && p99_ms >= 0 && p99_ms <= 50 && non2xx == 0 && socket_errors == 0},
        {"machine", Machine()}});
}

}  // namespace
}  // namespace xet::bench

int main(int argc, char** argv) {
  using namespace xet::bench;
  curl_global_init(CURL_GLOBAL_DEFAULT);
  int rc = 0;
  try {
    const Options opts =
        ParseToolOptions(argc, argv, "usage: cas_bench_tool recon|ingest|commit|wrk [--k v]");
    Emit({{"bench", "machine"}, {"mode", opts.mode}, {"machine", Machine()}});
    if (opts.mode == "recon") {
      RunRecon(opts);
    } else if (opts.mode == "ingest") {
      RunIngest(opts);
    } else if (opts.mode == "commit") {
      RunCommit(opts);
    } else if (opts.mode == "wrk") {
      RunWrk(opts);
    } else {
      throw std::runtime_error("unknown mode " + opts.mode);
    }
  } catch (const std::exception& e) {
    Log(std::string("error: ") + e.what());
    rc = 1;
  }
  curl_global_cleanup();
  return rc;
}
