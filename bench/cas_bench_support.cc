#include "cas_bench_support.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace xet::bench {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

// Waits up to `timeout` for `pid` to exit; true if it did.
bool WaitFor(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || r < 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

pid_t Spawn(std::vector<std::string> args, const std::string& stderr_path) {
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int out = ::open("/dev/null", O_WRONLY);
    ::dup2(out, 1);
    const int err = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(err, 2);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* r = static_cast<std::pair<HttpResponse*, bool>*>(user);
  r->first->body_bytes += size * n;
  if (r->second) r->first->body.append(data, size * n);
  return size * n;
}

}  // namespace

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

Summary Summarize(std::vector<double> samples) {
  Summary s;
  s.n = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  auto rank = [&](double q) {
    const auto k = static_cast<size_t>(std::ceil(q * static_cast<double>(samples.size())));
    return samples[std::min(samples.size() - 1, k == 0 ? 0 : k - 1)];
  };
  s.min = samples.front();
  s.p50 = rank(0.50);
  s.p99 = rank(0.99);
  s.max = samples.back();
  s.mean =
      std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
  return s;
}

nlohmann::json ToJson(const Summary& s) {
  return {{"n", s.n},     {"min", s.min}, {"p50", s.p50},
          {"p99", s.p99}, {"max", s.max}, {"mean", s.mean}};
}

double ProcessCpuMs(pid_t pid) {
  const std::string stat = ReadAll("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');  // the command name may contain spaces
  if (paren == std::string::npos) return 0;
  std::istringstream in(stat.substr(paren + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && (in >> field); ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);  // utime, stime
  }
  return ticks * 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

double ProcessRssMiB(pid_t pid) {
  const std::string status = ReadAll("/proc/" + std::to_string(pid) + "/status");
  const size_t at = status.find("VmRSS:");
  if (at == std::string::npos) return 0;
  return std::strtod(status.c_str() + at + 6, nullptr) / 1024.0;  // the value is in kB
}

double ThreadCpuMs() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("model name")) return Trim(line.substr(line.find(':') + 1));
  }
  return "unknown";
}

std::string LoadAverage() {
  std::string s = ReadAll("/proc/loadavg");
  std::string out;
  int fields = 0;
  for (char c : s) {
    if (c == ' ' && ++fields == 3) break;
    out += c;
  }
  return out;
}

void Emit(const nlohmann::json& j) {
  std::cout << j.dump() << std::endl;  // flushes
}

void Log(const std::string& line) { std::cerr << "cas-bench: " << line << std::endl; }

std::string RunCapture(const std::string& command) {
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) throw std::runtime_error("popen failed: " + command);
  std::string out;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  const int status = ::pclose(p);
  if (status != 0) {
    throw std::runtime_error("command failed (" + std::to_string(status) + "): " + command);
  }
  return out;
}

TempDir::TempDir(const std::string& name) {
  const char* base = std::getenv("TMPDIR");
  std::string templ = std::string(base ? base : "/tmp") + "/xetstore-bench-" + name + "-XXXXXX";
  if (!::mkdtemp(templ.data())) throw std::runtime_error("mkdtemp failed: " + templ);
  path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

ServerProcess::ServerProcess(const std::string& xetstore, const std::string& data_dir,
                             const std::string& index_url)
    : xetstore_(xetstore),
      data_dir_(data_dir),
      index_url_(index_url),
      log_path_(data_dir + ".log") {
  std::vector<std::string> argv = {xetstore_,    "serve",   "--listen",       "127.0.0.1:0",
                                   "--data-dir", data_dir_, "--no-access-log"};
  if (!index_url_.empty()) argv.insert(argv.end(), {"--index", index_url_});
  pid_ = Spawn(argv, log_path_);
  const std::string marker = "serving on ";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string log = ReadAll(log_path_);
    const size_t at = log.find(marker);
    if (at != std::string::npos) {
      const size_t end = log.find(' ', at + marker.size());
      url_ = log.substr(at + marker.size(), end - at - marker.size());
      return;
    }
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("xetstore serve exited early:\n" + log);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw std::runtime_error("xetstore serve did not start in 30 s:\n" + ReadAll(log_path_));
}

ServerProcess::~ServerProcess() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  if (!WaitFor(pid_, std::chrono::seconds(10))) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  std::error_code ec;
  std::filesystem::remove(log_path_, ec);
}

std::string ServerProcess::CreateToken(const std::string& permission,
                                       const std::string& scope) const {
  const std::string index = index_url_.empty() ? "" : " --index '" + index_url_ + "'";
  const std::string t = Trim(RunCapture(xetstore_ + " token --data-dir " + data_dir_ + index +
                                        " create --name bench --permission " + permission +
                                        " --scope " + scope + " 2>/dev/null"));
  if (!t.starts_with("hf_")) throw std::runtime_error("token create printed: " + t);
  return t;
}

std::string ServerProcess::Log() const { return ReadAll(log_path_); }

PerfRecording::PerfRecording(pid_t pid, const std::string& out) {
  if (out.empty()) return;
  // CAS_BENCH_PERF_DWARF=1: DWARF call graphs (the Release build keeps no frame pointers).
  const char* dwarf = std::getenv("CAS_BENCH_PERF_DWARF");
  const std::string call_graph = dwarf && *dwarf == '1' ? "dwarf,32768" : "fp";
  perf_pid_ = Spawn({"perf", "record", "-F", "999", "--call-graph", call_graph, "-p",
                     std::to_string(pid), "-o", out},
                    out + ".log");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // let perf attach
}

PerfRecording::~PerfRecording() {
  if (perf_pid_ <= 0) return;
  ::kill(perf_pid_, SIGINT);
  if (!WaitFor(perf_pid_, std::chrono::seconds(30))) {
    ::kill(perf_pid_, SIGKILL);
    int status = 0;
    ::waitpid(perf_pid_, &status, 0);
  }
}

HttpClient::HttpClient() : curl_(curl_easy_init()) {
  if (!curl_) throw std::runtime_error("curl_easy_init failed");
}

HttpClient::~HttpClient() { curl_easy_cleanup(static_cast<CURL*>(curl_)); }

HttpResponse HttpClient::Request(const std::string& method, const std::string& url,
                                 const std::vector<std::string>& headers,
                                 std::span<const uint8_t> body, bool keep_body) {
  CURL* curl = static_cast<CURL*>(curl_);
  curl_easy_reset(curl);  // keeps the live connection
  HttpResponse r;
  std::pair<HttpResponse*, bool> sink(&r, keep_body);
  curl_slist* list = nullptr;
  for (const auto& h : headers) list = curl_slist_append(list, h.c_str());
  list = curl_slist_append(list, "Expect:");  // no 100-continue round trip
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 300L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  // Large socket reads and writes, as a real client streaming tens of MB would use (the
  // defaults, 16 KiB and 64 KiB, make the client compete for the two cores in syscalls).
  curl_easy_setopt(curl, CURLOPT_BUFFERSIZE, 1L << 20);
  curl_easy_setopt(curl, CURLOPT_UPLOAD_BUFFERSIZE, 2L << 20);
  if (method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  } else if (method != "GET") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  }
  const CURLcode rc = curl_easy_perform(curl);
  curl_slist_free_all(list);
  if (rc != CURLE_OK) {
    throw std::runtime_error(method + " " + url + ": " + curl_easy_strerror(rc));
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r.status);
  return r;
}

std::string ToolOptions::Get(const std::string& key, const std::string& def) const {
  const auto it = values.find(key);
  return it == values.end() ? def : it->second;
}

size_t ToolOptions::GetSize(const std::string& key, size_t def) const {
  const auto it = values.find(key);
  return it == values.end() ? def : static_cast<size_t>(std::stoull(it->second));
}

ToolOptions ParseToolOptions(int argc, char** argv, const std::string& usage) {
  if (argc < 2) throw std::runtime_error(usage);
  ToolOptions o;
  o.mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string k = argv[i];
    if (!k.starts_with("--") || i + 1 >= argc) throw std::runtime_error("bad option: " + k);
    o.values[k.substr(2)] = argv[++i];
  }
  if (o.values.count("xetstore") == 0) {
    char self[4096];
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0) throw std::runtime_error("pass --xetstore");
    self[n] = '\0';
    o.values["xetstore"] = (std::filesystem::path(self).parent_path() / "xetstore").string();
  }
  return o;
}

nlohmann::json Machine() {
  return {
      {"cpu", CpuModel()}, {"cores", std::thread::hardware_concurrency()}, {"load", LoadAverage()}};
}

}  // namespace xet::bench
