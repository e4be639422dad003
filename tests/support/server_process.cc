#include "support/server_process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "support/file_contents.h"
#include "support/sanitizer_report.h"
#include "support/scratch_root.h"
#include "support/subprocess.h"

namespace xet::testing {
std::string MakeTempDir(const std::string& name) {
  static const ScratchRoot root("xetstore-it-");
  static int counter = 0;
  const auto dir = root.path() / (name + "-" + std::to_string(++counter));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

ServerProcess::ServerProcess(std::string data_dir, std::vector<std::string> extra_args)
    : data_dir_(std::move(data_dir)) {
  static int counter = 0;
  log_path_ = data_dir_ + ".log." + std::to_string(++counter);
  std::vector<std::string> args = {XETSTORE_BINARY, "serve",   "--listen",       "127.0.0.1:0",
                                   "--data-dir",    data_dir_, "--no-access-log"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  // The child truncates the log only after fork; a log left by an earlier test process that
  // had the same pid (and so the same paths) would meanwhile be read as this server's.
  std::filesystem::remove(log_path_);
  pid_ = ::fork();
  if (pid_ == 0) {
    const int fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 2);
    ::close(fd);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  const std::string marker = "serving on ";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string log = ReadWholeFile(log_path_);
    const size_t at = log.find(marker);
    if (at != std::string::npos) {
      const size_t end = log.find(' ', at + marker.size());
      url_ = log.substr(at + marker.size(), end - at - marker.size());
      return;
    }
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      ADD_FAILURE() << "xetstore serve exited early:\n" << log;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ADD_FAILURE() << "xetstore serve did not start in 15 s:\n" << ReadWholeFile(log_path_);
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) Kill();
}

std::string ServerProcess::AdminToken() const {
  std::string t = ReadWholeFile(data_dir_ + "/admin-token");
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t;
}

std::string ServerProcess::Log() const { return ReadWholeFile(log_path_); }

int ServerProcess::Terminate() {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  ExpectNoSanitizerReport(Log(), "xetstore serve");
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void ServerProcess::Kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  ExpectNoSanitizerReport(Log(), "xetstore serve");
}

std::string ServerProcess::CreateToken(const std::string& permission,
                                       const std::string& scope) const {
  std::string args =
      "token --data-dir " + data_dir_ + " create --name t --permission " + permission;
  if (!scope.empty()) args += " --scope " + scope;
  const CommandResult r = RunXetstore(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string token = r.out;
  while (!token.empty() && token.back() == '\n') token.pop_back();
  return token;
}

}  // namespace xet::testing
