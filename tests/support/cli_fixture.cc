#include "support/cli_fixture.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/file_contents.h"
#include "support/sanitizer_report.h"
#include "support/test_support.h"

namespace xet::testing {
namespace {

std::string EnvPrefix(const std::string& env) {
  std::string prefix = "env";
  for (const char* name : kConnectionEnvVars) prefix += std::string(" -u ") + name;
  prefix += " XETSTORE_CACHE_DIR=" + ClientCacheDir();
  if (!env.empty()) prefix += " " + env;
  return prefix;
}

}  // namespace

const std::string& ClientCacheDir() {
  static const std::string dir = MakeTempDir("client-cache");
  return dir;
}

CommandResult RunShell(const std::string& command) {
  static const std::string dir = MakeTempDir("cmd");
  static int counter = 0;
  const std::string base = dir + "/" + std::to_string(++counter);
  const std::string full = "( " + command + " ) >" + base + ".out 2>" + base + ".err";
  const int status = std::system(full.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadWholeFile(base + ".out");
  r.err = ReadWholeFile(base + ".err");
  ExpectNoSanitizerReport(r.err, command);
  return r;
}

CommandResult RunXetstoreEnv(const std::string& env, const std::string& args) {
  return RunShell(EnvPrefix(env) + " " + XETSTORE_BINARY + " " + args);
}

BackgroundXetstore::BackgroundXetstore(const std::vector<std::string>& args) {
  const std::string dir = MakeTempDir("bg");
  out_path_ = dir + "/out";
  err_path_ = dir + "/err";
  int fds[2];
  if (::pipe(fds) != 0) {
    ADD_FAILURE() << "pipe: " << std::strerror(errno);
    return;
  }
  const std::string cache_dir = ClientCacheDir();
  std::vector<std::string> argv_storage = {XETSTORE_BINARY};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(fds[0], 0);
    ::close(fds[0]);
    ::close(fds[1]);
    const int out = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out, 1);
    ::dup2(err, 2);
    for (const char* name : kConnectionEnvVars) ::unsetenv(name);
    ::setenv("XETSTORE_CACHE_DIR", cache_dir.c_str(), 1);
    // A test runner may ignore or block signals; the child starts with the defaults.
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    std::vector<char*> argv;
    for (auto& a : argv_storage) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(fds[0]);
  stdin_fd_ = fds[1];
}

BackgroundXetstore::~BackgroundXetstore() {
  CloseStdin();
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    ExpectNoSanitizerReport(ReadWholeFile(err_path_), "background xetstore");
  }
}

bool BackgroundXetstore::WriteStdin(std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(stdin_fd_, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void BackgroundXetstore::CloseStdin() {
  if (stdin_fd_ >= 0) ::close(stdin_fd_);
  stdin_fd_ = -1;
}

void BackgroundXetstore::Signal(int sig) {
  if (pid_ > 0) ::kill(pid_, sig);
}

CommandResult BackgroundXetstore::Wait() {
  CloseStdin();
  CommandResult r;
  if (pid_ <= 0) return r;
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadWholeFile(out_path_);
  r.err = ReadWholeFile(err_path_);
  ExpectNoSanitizerReport(r.err, "background xetstore");
  return r;
}

void CliServerTest::SetUp() {
  server_ = std::make_unique<ServerProcess>(MakeTempDir("cli-server"));
  admin_ = server_->AdminToken();
  ASSERT_FALSE(admin_.empty());
}

void CliServerTest::RestartServer() {
  const std::string data_dir = server_->data_dir();
  server_->Kill();
  server_.reset();
  server_ = std::make_unique<ServerProcess>(data_dir);
}

CommandResult CliServerTest::RunAs(const std::string& token, const std::string& args) {
  std::string env = "XETSTORE_ENDPOINT=" + server_->url();
  if (!token.empty()) env += " XETSTORE_TOKEN=" + token;
  return RunXetstoreEnv(env, args);
}

void CliServerTest::CreateBucket(const std::string& id, bool is_public) {
  const auto r = Run("buckets create " + id + (is_public ? " --public" : ""));
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

std::map<std::string, ListedFile> CliServerTest::RemoteFiles(const std::string& bucket,
                                                             const std::string& prefix) {
  const auto r = Run("ls -R --json hf://buckets/" + bucket + (prefix.empty() ? "" : "/" + prefix));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, ListedFile> out;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    out[j["path"]] = {j["size"], j["xetHash"], j["mtime"]};
  }
  return out;
}

std::string CliServerTest::XetHashOf(const std::string& path) {
  const auto r = RunXetstore("hash --json " + path);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out)["xet_hash"];
}

std::string CliServerTest::LocalDir(const std::string& name) const { return MakeTempDir(name); }

void WriteLocalFile(const std::string& path, std::string_view data) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

std::string ReadLocalFile(const std::string& path) { return ReadWholeFile(path); }

std::string RandomString(size_t n, uint64_t seed) {
  const auto v = RandomBytes(n, seed);
  return std::string(v.begin(), v.end());
}

int64_t LocalMtimeMs(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return int64_t{st.st_mtim.tv_sec} * 1000 + st.st_mtim.tv_nsec / 1'000'000;
}

}  // namespace xet::testing
