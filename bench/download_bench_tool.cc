// Download pipeline benchmark (issue 6): the client side only, against a `xetstore serve`
// started separately (bench/run-download-bench starts one, so the server's memory is not
// counted in this process's peak RSS). One JSON object per line on stdout.
//
//   download_bench_tool upload --endpoint URL --token T --file PATH
//       Uploads PATH with the Uploader (default options) and prints
//       {"file_hash": ..., "size": ..., "seconds": ...}.
//   download_bench_tool download --endpoint URL --token T --hash H --size N --dest PATH
//                                [--cache DIR] [--concurrency N] [--budget-mib N]
//                                [--block-mib N]
//       Downloads the file to PATH (removed first) with the Downloader and prints wall
//       seconds, MB/s, bytes received / served from the cache, process CPU and peak RSS
//       (getrusage). Timings are never asserted here.
//   download_bench_tool sink --endpoint URL --token T --hash H --size N [--concurrency N]
//       The Downloader streaming the whole file to a sink that drops the bytes
//       (DownloadToSink: the file hash is checked, nothing is written). Same fields.
//   download_bench_tool read --endpoint URL --token T --hash H --size N [--read-kib K]
//                            [--streams S] [--memory-mib M] [--fetch-threads T]
//                            [--verify PATH] [--files LIST]
//       Reads the whole file sequentially through RangeReader streams (S of them at once,
//       each reading all of the file, default 1) in reads of K KiB (default 1024) into
//       one buffer per stream; with --verify, compares every read with the local file.
//       --files names a file of "HASH SIZE" lines: stream i then reads file i modulo their
//       number (--hash and --size are still required and ignored).
//       Same fields (MB/s counts the bytes of all streams) plus the reader's fetches.
//   download_bench_tool random --endpoint URL --token T --hash H --size N [--count C]
//                              [--read-kib K] [--seed S] [--cache DIR]
//       C reads (default 1000) of K KiB (default 4) at random offsets, each on a fresh
//       RangeReader stream (the plan fetched first, not timed), then the same reads again:
//       the latencies of the first pass (uncached: each read fetches its chunks) and of the
//       second (decoded chunks in memory), as p50 / p90 / p99 in milliseconds. With
//       --cache, a pass on a fresh reader between them: chunks from the on-disk cache.
//   download_bench_tool transfer --endpoint URL --token T --hash H --size N
//                                [--concurrency N]
//       The bytes a download must move and nothing else: one reconstruction of the whole
//       file, then every fetch range GET on N threads (default 4, as the Downloader), the
//       bytes counted and dropped (no decoding, hashing or writing). Prints the same
//       fields as download; its MB/s is the floor a download's transfer sets on this
//       machine.
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "client/cas/cas_client.h"
#include "client/download/downloader.h"
#include "client/download/range_reader.h"
#include "client/transport/http_client.h"
#include "client/upload/uploader.h"
#include "common/byte_source.h"

namespace xet::bench {
namespace {

using nlohmann::json;

struct Args {
  std::string mode;
  std::map<std::string, std::string> values;

  const std::string& Need(const std::string& key) const {
    auto it = values.find(key);
    if (it == values.end()) throw std::runtime_error("missing --" + key);
    return it->second;
  }
  uint64_t Number(const std::string& key, uint64_t def) const {
    auto it = values.find(key);
    return it == values.end() ? def : std::stoull(it->second);
  }
};

Args Parse(int argc, char** argv) {
  if (argc < 2) throw std::runtime_error("usage: download_bench_tool upload|download [--k v]");
  Args a;
  a.mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string k = argv[i];
    if (!k.starts_with("--") || i + 1 >= argc) throw std::runtime_error("bad option: " + k);
    a.values[k.substr(2)] = argv[++i];
  }
  return a;
}

double CpuSeconds(const rusage& u) {
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

template <typename T>
T Check(Result<T> r, const char* what) {
  if (!r.ok()) throw std::runtime_error(std::string(what) + ": " + r.status().ToString());
  return std::move(*r);
}

// Transfer mode: GETs every fetch range of `recon` on `threads` threads, dropping the bytes;
// returns how many arrived.
uint64_t FetchAllRanges(CasClient& cas, const Reconstruction& recon, size_t threads) {
  std::vector<std::pair<const FetchEntry*, size_t>> jobs;
  for (const auto& [xorb, entries] : recon.xorbs) {
    for (const FetchEntry& e : entries) {
      for (size_t r = 0; r < e.ranges.size(); ++r) jobs.emplace_back(&e, r);
    }
  }
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> received{0};
  std::mutex mu;
  Status failure;
  std::vector<std::thread> pool;
  for (size_t t = 0; t < std::max<size_t>(1, threads); ++t) {
    pool.emplace_back([&] {
      for (size_t i = next++; i < jobs.size(); i = next++) {
        Status st = cas.StreamRange(*jobs[i].first, jobs[i].second,
                                    [&](std::span<const uint8_t> bytes) -> Status {
                                      received += bytes.size();
                                      return Status::Ok();
                                    });
        if (!st.ok()) {
          std::lock_guard lock(mu);
          if (failure.ok()) failure = st;
        }
      }
    });
  }
  for (auto& t : pool) t.join();
  if (!failure.ok()) throw std::runtime_error("transfer: " + failure.ToString());
  return received.load();
}

// Runs `fetch`, which returns its mode's own fields, and prints them with the fields both
// fetching modes report: size, wall seconds since `t0`, MB/s, and the CPU and peak RSS of
// this process.
void PrintFetch(uint64_t size, std::chrono::steady_clock::time_point t0,
                const std::function<json()>& fetch) {
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  json out = fetch();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  out["size"] = size;
  out["seconds"] = s;
  out["mb_per_s"] = static_cast<double>(size) / s / 1e6;
  out["cpu_s"] = CpuSeconds(after) - CpuSeconds(before);
  out["peak_rss_mib"] = static_cast<double>(after.ru_maxrss) / 1024.0;
  std::printf("%s\n", out.dump().c_str());
}

// The q-quantile of `v` (sorted in place), in milliseconds.
double QuantileMs(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))] * 1e3;
}

RangeReaderOptions ReaderOptions(const Args& a) {
  RangeReaderOptions o;
  o.memory_bytes = a.Number("memory-mib", o.memory_bytes >> 20) << 20;
  o.fetch_threads = a.Number("fetch-threads", o.fetch_threads);
  return o;
}

// Read mode: `streams` streams each read the whole file in order.
json ReadSequentially(CasClient& cas, const Args& a, const Hash& hash, uint64_t size) {
  RangeReader reader(cas, ReaderOptions(a));
  const size_t step = a.Number("read-kib", 1024) << 10;
  const size_t streams = a.Number("streams", 1);
  const std::string verify = a.values.count("verify") != 0 ? a.values.at("verify") : "";
  std::vector<std::pair<Hash, uint64_t>> files;
  if (a.values.count("files") != 0) {
    std::ifstream list(a.values.at("files"));
    std::string hex;
    uint64_t n = 0;
    while (list >> hex >> n) {
      const auto h = Hash::FromHex(hex);
      if (!h) throw std::runtime_error("--files: bad hash " + hex);
      files.emplace_back(*h, n);
    }
  }
  if (files.empty()) files.emplace_back(hash, size);
  for (const auto& [h, n] : files) reader.PrefetchPlan(h, n);
  std::atomic<uint64_t> read{0}, mismatches{0};
  std::mutex mu;
  Status failure;
  std::vector<std::thread> pool;
  for (size_t t = 0; t < streams; ++t) {
    pool.emplace_back([&, t] {
      const auto [file, file_size] = files[t % files.size()];
      auto s = reader.Open(file, file_size);
      std::vector<uint8_t> buf(step), expect;
      std::ifstream local;
      if (!verify.empty()) local.open(verify, std::ios::binary);
      for (uint64_t off = 0; off < file_size;) {
        auto got = s->Read(off, buf);
        if (!got.ok() || *got == 0) {
          std::lock_guard lock(mu);
          if (failure.ok()) failure = got.ok() ? Status::Internal("short file") : got.status();
          return;
        }
        if (local.is_open()) {
          expect.resize(*got);
          local.read(reinterpret_cast<char*>(expect.data()), static_cast<std::streamsize>(*got));
          if (!std::equal(expect.begin(), expect.end(), buf.begin())) ++mismatches;
        }
        off += *got;
        read += *got;
      }
    });
  }
  for (auto& t : pool) t.join();
  if (!failure.ok()) throw std::runtime_error("read: " + failure.ToString());
  const RangeReader::Stats st = reader.stats();
  json out{{"read_kib", step >> 10},
           {"streams", streams},
           {"files", files.size()},
           {"bytes_read", read.load()},
           {"fetches", st.fetches},
           {"bytes_received", st.fetched_bytes},
           {"reconstructions", st.reconstruction_requests}};
  if (!verify.empty()) out["mismatched_reads"] = mismatches.load();
  return out;
}

// Random mode: the latencies of random reads, uncached then cached.
json ReadRandomly(CasClient& cas, const Args& a, const Hash& hash, uint64_t size) {
  RangeReaderOptions o = ReaderOptions(a);
  if (a.values.count("cache") != 0) o.chunk_cache_dir = a.values.at("cache");
  auto reader = std::make_unique<RangeReader>(cas, o);
  const size_t n = a.Number("read-kib", 4) << 10;
  const size_t count = a.Number("count", 1000);
  std::mt19937_64 rng(a.Number("seed", 1));
  std::vector<uint64_t> offsets(count);
  for (auto& off : offsets) off = rng() % (size > n ? size - n : 1);
  std::vector<uint8_t> buf(n);
  auto plan = [&] {  // fetched before the timed reads
    if (!reader->Open(hash, size)->Read(0, std::span<uint8_t>(buf).first(1)).ok()) {
      throw std::runtime_error("plan");
    }
  };
  // Fresh streams for each read (one stream's reads never look sequential to it then).
  auto pass = [&] {
    std::vector<double> lat;
    for (uint64_t off : offsets) {
      auto stream = reader->Open(hash, size);
      const auto t0 = std::chrono::steady_clock::now();
      auto got = stream->Read(off, buf);
      lat.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      if (!got.ok()) throw std::runtime_error("random read: " + got.status().ToString());
    }
    return lat;
  };
  json out{{"read_kib", n >> 10}, {"count", count}};
  auto report = [&](const std::string& name, std::vector<double>& lat, uint64_t received) {
    out[name + "_p50_ms"] = QuantileMs(lat, 0.5);
    out[name + "_p90_ms"] = QuantileMs(lat, 0.9);
    out[name + "_p99_ms"] = QuantileMs(lat, 0.99);
    out[name + "_bytes_received_per_read"] =
        static_cast<double>(received) / static_cast<double>(count);
  };
  plan();
  uint64_t before = reader->stats().fetched_bytes;
  auto cold = pass();
  report("uncached", cold, reader->stats().fetched_bytes - before);
  if (!o.chunk_cache_dir.empty()) {
    // A fresh reader: nothing in memory, every chunk in the on-disk cache.
    reader = std::make_unique<RangeReader>(cas, o);
    plan();
    before = reader->stats().fetched_bytes;
    auto disk = pass();
    report("disk", disk, reader->stats().fetched_bytes - before);
  }
  before = reader->stats().fetched_bytes;
  auto warm = pass();
  report("cached", warm, reader->stats().fetched_bytes - before);
  return out;
}

int Run(const Args& a) {
  HttpClient http;
  auto tokens = MakeStaticTokenSource(XetToken{a.Need("token"), a.Need("endpoint") + "/", 0});
  CasClient cas(http, *tokens);
  const auto t0 = std::chrono::steady_clock::now();
  if (a.mode == "upload") {
    const std::string path = a.Need("file");
    Uploader up(cas, UploadOptions{});
    UploadItem item;
    item.name = path;
    item.size_hint = std::filesystem::file_size(path);
    item.open = [path] { return OpenFileSource(path); };
    auto files = Check(up.Upload(std::span<const UploadItem>(&item, 1)), "upload");
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%s\n", json{{"file_hash", files.at(0).file_hash.ToHex()},
                             {"size", files.at(0).size},
                             {"seconds", s}}
                            .dump()
                            .c_str());
    return 0;
  }
  if (a.mode != "download" && a.mode != "transfer" && a.mode != "sink" && a.mode != "read" &&
      a.mode != "random") {
    throw std::runtime_error("unknown mode " + a.mode);
  }
  const auto hash = Hash::FromHex(a.Need("hash"));
  if (!hash) throw std::runtime_error("--hash: not a Xet hash");
  const uint64_t size = a.Number("size", 0);
  if (a.mode == "transfer") {
    PrintFetch(size, t0, [&] {
      const Reconstruction recon = Check(cas.GetReconstruction(*hash, std::nullopt), "reconstruct");
      return json{{"bytes_received", FetchAllRanges(cas, recon, a.Number("concurrency", 4))}};
    });
    return 0;
  }
  if (a.mode == "read") {
    PrintFetch(size, t0, [&] { return ReadSequentially(cas, a, *hash, size); });
    return 0;
  }
  if (a.mode == "random") {
    PrintFetch(size, t0, [&] { return ReadRandomly(cas, a, *hash, size); });
    return 0;
  }
  if (a.mode == "sink") {
    DownloadOptions o;
    TransferStats stats;
    o.stats = &stats;
    o.fetch_concurrency = a.Number("concurrency", o.fetch_concurrency);
    Downloader d(cas, o);
    PrintFetch(size, t0, [&] {
      const Hash got = Check(d.DownloadToSink(*hash, size, [](std::string_view) { return true; }),
                             "download to sink");
      if (got != *hash) throw std::runtime_error("download to sink: file hash mismatch");
      return json{{"bytes_received", stats.bytes_received.load()}};
    });
    return 0;
  }
  const std::string dest = a.Need("dest");
  DownloadOptions o;
  TransferStats stats;
  o.stats = &stats;
  o.fetch_concurrency = a.Number("concurrency", o.fetch_concurrency);
  o.max_bytes_in_flight = a.Number("budget-mib", o.max_bytes_in_flight >> 20) << 20;
  o.block_bytes = a.Number("block-mib", o.block_bytes >> 20) << 20;
  if (a.values.count("cache") != 0) o.chunk_cache_dir = a.values.at("cache");
  std::filesystem::remove(dest);
  Downloader d(cas, o);
  PrintFetch(size, t0, [&] {
    Status st = d.DownloadToFile(*hash, size, dest);
    if (!st.ok()) throw std::runtime_error("download: " + st.ToString());
    return json{{"bytes_received", stats.bytes_received.load()},
                {"bytes_from_cache", stats.bytes_from_cache.load()},
                {"cache", a.values.count("cache") != 0}};
  });
  return 0;
}

}  // namespace
}  // namespace xet::bench

int main(int argc, char** argv) {
  try {
    return xet::bench::Run(xet::bench::Parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "download_bench_tool: %s\n", e.what());
    return 1;
  }
}
