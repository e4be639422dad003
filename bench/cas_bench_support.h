// Helpers for the CAS server benchmarks (cas_bench_tool.cc): a real `xetstore serve`
// child process, a keep-alive libcurl client, token creation, latency summaries, machine
// facts, and the one-JSON-object-per-line output the run-cas-bench script reads.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

namespace xet::bench {

// Milliseconds since `start` on the steady clock.
double MsSince(std::chrono::steady_clock::time_point start);

struct Summary {
  size_t n = 0;
  double min = 0, p50 = 0, p99 = 0, max = 0, mean = 0;
};
// Nearest-rank percentiles of `samples` (any unit). Empty input gives zeros.
Summary Summarize(std::vector<double> samples);
// {"n":..,"min":..,"p50":..,"p99":..,"max":..,"mean":..}
nlohmann::json ToJson(const Summary& s);

// CPU time (user + system, all threads) `pid` has used so far, in ms (10 ms resolution).
double ProcessCpuMs(pid_t pid);
// Resident memory of `pid` now (VmRSS), in MiB; 0 if unreadable.
double ProcessRssMiB(pid_t pid);
// CPU time of the calling thread, in ms.
double ThreadCpuMs();

// "model name" from /proc/cpuinfo, and the first three fields of /proc/loadavg.
std::string CpuModel();
std::string LoadAverage();

// Prints `j` as one line on stdout (flushed): the machine-readable result stream.
void Emit(const nlohmann::json& j);
// Progress and diagnostics on stderr, prefixed with "cas-bench: ".
void Log(const std::string& line);

// Runs `command` with /bin/sh and returns its stdout; throws on a non-zero exit.
std::string RunCapture(const std::string& command);

// A fresh directory under $TMPDIR (or /tmp); removed by the destructor.
class TempDir {
 public:
  explicit TempDir(const std::string& name);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// `xetstore serve --listen 127.0.0.1:0 --data-dir DIR --no-access-log` as a child process;
// the constructor waits until it prints "serving on <url>" (throws after 30 s or if it
// exits). The destructor stops it with SIGTERM (SIGKILL after 10 s).
class ServerProcess {
 public:
  // `xetstore serve --listen 127.0.0.1:0 --data-dir DATA_DIR --no-access-log`, with
  // `--index INDEX_URL` when one is given (else the SQLite index in DATA_DIR).
  ServerProcess(const std::string& xetstore, const std::string& data_dir,
                const std::string& index_url = "");
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  const std::string& url() const { return url_; }
  pid_t pid() const { return pid_; }
  // `xetstore token --data-dir DIR [--index URL] create ...`; returns the hf_ secret.
  std::string CreateToken(const std::string& permission, const std::string& scope) const;
  std::string Log() const;

 private:
  std::string xetstore_;
  std::string data_dir_;
  std::string index_url_;
  std::string log_path_;
  std::string url_;
  pid_t pid_ = -1;
};

// `perf record -F 999 --call-graph fp -p PID -o OUT` as a child process while in scope (SIGINT at
// the end, so perf writes its file). Does nothing when `out` is empty.
class PerfRecording {
 public:
  PerfRecording(pid_t pid, const std::string& out);
  ~PerfRecording();
  PerfRecording(const PerfRecording&) = delete;
  PerfRecording& operator=(const PerfRecording&) = delete;

 private:
  pid_t perf_pid_ = -1;
};

struct HttpResponse {
  long status = 0;
  size_t body_bytes = 0;
  std::string body;  // only when the request asked to keep it
};

// One libcurl easy handle, reused: consecutive requests share one keep-alive connection.
// Not thread-safe; use one per thread. Throws on transport errors.
class HttpClient {
 public:
  HttpClient();
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // `headers` are "Name: value" lines. With keep_body false the body is only counted (what
  // a timing loop wants: no copy of a multi-megabyte answer).
  HttpResponse Request(const std::string& method, const std::string& url,
                       const std::vector<std::string>& headers, std::span<const uint8_t> body = {},
                       bool keep_body = true);

 private:
  void* curl_;  // CURL*
};

inline std::string Bearer(const std::string& token) { return "Authorization: Bearer " + token; }

// A bench tool's command line: `TOOL MODE [--key value]...`.
struct ToolOptions {
  std::string mode;
  std::map<std::string, std::string> values;

  // The value of --key, or `def` when absent.
  std::string Get(const std::string& key, const std::string& def) const;
  // The value of --key as an unsigned number, or `def` when absent; throws when not a number.
  size_t GetSize(const std::string& key, size_t def) const;
};
// Parses argv as above; `usage` is the message thrown (std::runtime_error) when no mode is
// given. --xetstore defaults to the `xetstore` binary beside the running tool.
ToolOptions ParseToolOptions(int argc, char** argv, const std::string& usage);

// {"cpu":..,"cores":..,"load":..}: the machine facts printed with every result.
nlohmann::json Machine();

}  // namespace xet::bench
