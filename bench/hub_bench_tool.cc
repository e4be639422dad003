// Bucket API benchmarks (issue 4), each against a real `xetstore serve` child process on
// 127.0.0.1:0 with a temporary --data-dir, driven over loopback HTTP on one keep-alive
// connection. Results are JSON objects, one per line, on stdout (bench/run-hub-bench turns
// them into a table); progress goes to stderr. Timings are never asserted here.
//
//   hub_bench_tool list  [--entries 100000] [--page 1000] [--runs 3]
//       Fills a bucket with `entries` paths (in batches of 10,000 addFile operations, all
//       pointing at one uploaded file; 3 directory levels), then lists it recursively,
//       following the Link rel="next" pages of `page` items, `runs` times. Reports entries
//       per second of the whole walk (target >= 50,000/s), per run, and the server CPU.
//   hub_bench_tool batch [--ops 10000] [--runs 5]
//       Registers `ops` distinct files (one single-chunk file each, in one shard), then
//       times one POST .../batch of `ops` addFile operations to fresh paths, `runs` times
//       (new paths each run), and once more overwriting the previous run's paths. Target:
//       <= 1 s per batch.
//
// Common: --xetstore PATH (default: `xetstore` beside this executable); --perf FILE records
// the server with `perf record` during the timed part.
#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cas_bench_support.h"
#include "client/hub/wire.h"
#include "format/merkle.h"
#include "format/shard_types.h"
#include "format/shard_writer.h"
#include "format/xorb.h"

namespace xet::bench {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

using Options = ToolOptions;

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

json ExpectJson(const HttpResponse& r, const std::string& what) {
  if (r.status != 200) {
    throw std::runtime_error(what + ": HTTP " + std::to_string(r.status) + " " +
                             r.body.substr(0, 400));
  }
  return json::parse(r.body);
}

// A server with one bucket and a user token that may write it.
struct Setup {
  explicit Setup(const Options& opts, const std::string& name)
      : dir(name), server(opts.Get("xetstore", ""), dir.path() + "/data") {
    token = server.CreateToken("write", kBucket);
    ExpectJson(http.Request("POST", server.url() + "/api/buckets/" + kBucket,
                            {Bearer(token), "Content-Type: application/json"},
                            Bytes(R"({"private":true})")),
               "create bucket");
    cas_token = ExpectJson(http.Request("GET", Api("/xet-write-token"), {Bearer(token)}),
                           "write token")["accessToken"];
  }
  std::string Api(const std::string& rest) const {
    return server.url() + "/api/buckets/" + kBucket + rest;
  }
  // Uploads xorbs and an upload-form shard with the bucket's CAS token.
  void Upload(const std::vector<SerializedXorb>& xorbs, const std::vector<uint8_t>& shard) {
    for (const auto& x : xorbs) {
      ExpectJson(http.Request("POST", server.url() + "/v1/xorbs/default/" + x.hash.ToHex(),
                              {Bearer(cas_token)}, x.bytes),
                 "xorb upload");
    }
    ExpectJson(http.Request("POST", server.url() + "/v1/shards", {Bearer(cas_token)}, shard),
               "shard upload");
  }
  // POSTs one NDJSON batch; returns its wall time in ms.
  double Batch(const std::string& body, size_t ops) {
    const auto t0 = Clock::now();
    const json r =
        ExpectJson(http.Request("POST", Api("/batch"),
                                {Bearer(token), "Content-Type: application/x-ndjson"}, Bytes(body)),
                   "batch");
    const double ms = MsSince(t0);
    if (r.value("succeeded", 0u) != ops) throw std::runtime_error("batch failed: " + r.dump());
    return ms;
  }

  static constexpr const char* kBucket = "bench/bucket";
  TempDir dir;
  ServerProcess server;
  HttpClient http;
  std::string token, cas_token;
};

// `n` distinct single-chunk files of 64 random bytes, packed into xorbs of up to 8,000
// chunks, and the upload-form shard registering them.
struct ManyFiles {
  std::vector<SerializedXorb> xorbs;
  std::vector<Hash> files;
  std::vector<uint8_t> shard;
};

ManyFiles MakeManyFiles(size_t n, uint64_t seed) {
  ManyFiles out;
  Shard shard;
  XorbBuilder builder(CompressionPolicy::kNone);
  std::vector<uint8_t> chunk(64);
  uint64_t state = seed;
  auto flush = [&] {
    out.xorbs.push_back(builder.Finish());
    const SerializedXorb& x = out.xorbs.back();
    for (uint32_t i = 0; i < x.table.chunks.size(); ++i) {
      const ChunkInfo& c = x.table.chunks[i];
      FileInfo f;
      f.flags = kFileFlagWithVerification;
      FileDataSequenceEntry e;
      e.cas_hash = x.hash;
      e.unpacked_segment_bytes = static_cast<uint32_t>(c.size);
      e.chunk_index_start = i;
      e.chunk_index_end = i + 1;
      f.terms.push_back(e);
      f.verification.push_back({VerificationHash(std::vector<Hash>{c.hash}), {}});
      f.file_hash = FileHash(std::vector<ChunkInfo>{c});
      out.files.push_back(f.file_hash);
      shard.files.push_back(std::move(f));
    }
  };
  for (size_t i = 0; i < n; ++i) {
    for (size_t b = 0; b < chunk.size(); b += 8) {
      uint64_t z = (state += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      z ^= z >> 31;
      std::memcpy(chunk.data() + b, &z, 8);
    }
    if (!builder.Add(chunk).ok()) throw std::runtime_error("XorbBuilder::Add failed");
    if (builder.num_chunks() == 8000) flush();
  }
  if (!builder.empty()) flush();
  auto bytes = SerializeShardForUpload(shard);
  if (!bytes.ok()) throw std::runtime_error("shard: " + bytes.status().ToString());
  out.shard = std::move(*bytes);
  return out;
}

std::string AddFileLine(const std::string& path, const Hash& h) {
  return R"({"type":"addFile","path":")" + path + R"(","xetHash":")" + h.ToHex() + "\"}\n";
}

// "d07/s3/f000123.bin": 3 levels, ~100 top-level directories, 10 below each.
std::string ListPath(size_t i) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "d%02zu/s%zu/f%07zu.bin", i % 100, (i / 100) % 10, i);
  return buf;
}

std::string NextLink(const std::string& link) { return NextLinkUrl(link).value_or(std::string()); }

void RunList(const Options& opts) {
  const size_t entries = opts.GetSize("entries", 100'000);
  const size_t page = opts.GetSize("page", 1000);
  const size_t runs = opts.GetSize("runs", 3);
  Setup s(opts, "hub-list");
  const ManyFiles one = MakeManyFiles(1, 7);
  s.Upload(one.xorbs, one.shard);
  Log("filling " + std::to_string(entries) + " entries");
  std::vector<double> fill_ms;
  for (size_t start = 0; start < entries; start += 10'000) {
    std::string body;
    const size_t end = std::min(entries, start + 10'000);
    for (size_t i = start; i < end; ++i) body += AddFileLine(ListPath(i), one.files[0]);
    fill_ms.push_back(s.Batch(body, end - start));
  }

  // One keep-alive client that also reads the Link header.
  CURL* curl = curl_easy_init();
  std::string body, link;
  curl_easy_setopt(
      curl, CURLOPT_WRITEFUNCTION, +[](char* d, size_t sz, size_t n, void* u) {
        static_cast<std::string*>(u)->append(d, sz * n);
        return sz * n;
      });
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(
      curl, CURLOPT_HEADERFUNCTION, +[](char* d, size_t sz, size_t n, void* u) {
        std::string line(d, sz * n);
        if (line.size() > 5 && strncasecmp(line.c_str(), "link:", 5) == 0) {
          // The value without the blanks around it and the line's CRLF.
          const size_t first = line.find_first_not_of(" \t", 5);
          const size_t last = line.find_last_not_of(" \t\r\n");
          *static_cast<std::string*>(u) = first == std::string::npos || last < first
                                              ? std::string()
                                              : line.substr(first, last - first + 1);
        }
        return sz * n;
      });
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &link);
  curl_slist* headers = curl_slist_append(nullptr, Bearer(s.token).c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);

  std::vector<double> walls;
  double cpu_total = 0;
  const PerfRecording perf(s.server.pid(), opts.Get("perf", ""));
  for (size_t run = 0; run < runs; ++run) {
    std::string url = s.Api("/tree?recursive=true&limit=" + std::to_string(page));
    size_t seen = 0, pages = 0;
    const double cpu0 = ProcessCpuMs(s.server.pid());
    const auto t0 = Clock::now();
    while (!url.empty()) {
      body.clear();
      link.clear();
      curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
      if (curl_easy_perform(curl) != CURLE_OK) throw std::runtime_error("tree request failed");
      long status = 0;
      curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
      if (status != 200) throw std::runtime_error("tree: HTTP " + std::to_string(status) + body);
      seen += json::parse(body).size();
      ++pages;
      url = NextLink(link);
    }
    const double ms = MsSince(t0);
    cpu_total += ProcessCpuMs(s.server.pid()) - cpu0;
    if (seen != entries) {
      throw std::runtime_error("listed " + std::to_string(seen) + " of " + std::to_string(entries));
    }
    walls.push_back(ms);
    Log("run " + std::to_string(run + 1) + ": " + std::to_string(pages) + " pages in " +
        std::to_string(ms) + " ms");
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  std::sort(walls.begin(), walls.end());
  const double median = walls[walls.size() / 2];
  const double per_s = static_cast<double>(entries) / (median / 1000.0);
  Emit({{"bench", "list"},
        {"case", std::to_string(entries) + " entries, recursive, pages of " + std::to_string(page)},
        {"entries", entries},
        {"page", page},
        {"wall_ms", ToJson(Summarize(walls))},
        {"entries_per_s", per_s},
        {"server_cpu_ms_per_walk", cpu_total / static_cast<double>(runs)},
        {"fill_batch_ms", ToJson(Summarize(fill_ms))},
        {"target", "entries/s >= 50000"},
        {"met", per_s >= 50'000},
        {"machine", Machine()}});
}

void RunBatch(const Options& opts) {
  const size_t ops = opts.GetSize("ops", 10'000);
  const size_t runs = opts.GetSize("runs", 5);
  Setup s(opts, "hub-batch");
  Log("registering " + std::to_string(ops) + " files");
  const ManyFiles files = MakeManyFiles(ops, 11);
  s.Upload(files.xorbs, files.shard);
  const PerfRecording perf(s.server.pid(), opts.Get("perf", ""));
  auto body_for = [&](size_t run) {
    std::string body;
    for (size_t i = 0; i < ops; ++i) {
      body += AddFileLine("run" + std::to_string(run) + "/dir" + std::to_string(i % 50) + "/file-" +
                              std::to_string(i) + ".bin",
                          files.files[i]);
    }
    return body;
  };
  std::vector<double> fresh;
  double cpu_total = 0;
  for (size_t run = 0; run < runs; ++run) {
    const std::string body = body_for(run);
    const double cpu0 = ProcessCpuMs(s.server.pid());
    fresh.push_back(s.Batch(body, ops));
    cpu_total += ProcessCpuMs(s.server.pid()) - cpu0;
    Log("run " + std::to_string(run + 1) + ": " + std::to_string(fresh.back()) + " ms");
  }
  const double overwrite = s.Batch(body_for(runs - 1), ops);
  const Summary sum = Summarize(fresh);
  Emit({{"bench", "batch"},
        {"case", std::to_string(ops) + " addFile (distinct files, new paths)"},
        {"ops", ops},
        {"batch_ms", ToJson(sum)},
        {"overwrite_ms", overwrite},
        {"server_cpu_ms_per_batch", cpu_total / static_cast<double>(runs)},
        {"target", "batch ms <= 1000"},
        {"met", sum.p50 <= 1000},
        {"machine", Machine()}});
}

}  // namespace
}  // namespace xet::bench

int main(int argc, char** argv) {
  using namespace xet::bench;
  curl_global_init(CURL_GLOBAL_DEFAULT);
  int rc = 0;
  try {
    const Options opts = ParseToolOptions(argc, argv, "usage: hub_bench_tool list|batch [--k v]");
    Emit({{"bench", "machine"}, {"mode", opts.mode}, {"machine", Machine()}});
    if (opts.mode == "list") {
      RunList(opts);
    } else if (opts.mode == "batch") {
      RunBatch(opts);
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
