#include "support/s3_test_server.h"

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
#include "support/scratch_root.h"

namespace xet::testing {
namespace {

namespace fs = std::filesystem;

}  // namespace

std::string S3rverPath() {
  if (const char* p = std::getenv("XETSTORE_S3RVER"); p != nullptr && *p != '\0') return p;
  return XETSTORE_DEFAULT_S3RVER;
}

S3TestServer& S3TestServer::Shared() {
  static const ScratchRoot root("xetstore-s3-");
  static S3TestServer server((root.path() / "data").string());
  return server;
}

S3TestServer::S3TestServer(std::string data_dir) : data_dir_(std::move(data_dir)) {
  const std::string bin = S3rverPath();
  if (::access(bin.c_str(), X_OK) != 0) {
    ADD_FAILURE() << "s3rver not found at " << bin
                  << ": install it with tests/s3rver/install (npm ci), or set XETSTORE_S3RVER";
    return;
  }
  fs::create_directories(data_dir_);
  log_path_ = data_dir_ + ".log";
  std::vector<std::string> args = {bin,         "-d",
                                   data_dir_,   "-a",
                                   "127.0.0.1", "-p",
                                   "0",         "--configure-bucket",
                                   kBucket,     "--no-vhost-buckets"};
  pid_ = ::fork();
  if (pid_ == 0) {
    const int fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::close(fd);
    // s3rver's continuation tokens use DES, which OpenSSL 3 keeps in its legacy provider.
    ::setenv("NODE_OPTIONS", "--openssl-legacy-provider", 1);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  const std::string marker = "S3rver listening on ";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string log = ReadWholeFile(log_path_);
    if (size_t at = log.find(marker); at != std::string::npos) {
      const size_t end = log.find('\n', at);
      if (end != std::string::npos) {
        endpoint_ = "http://" + log.substr(at + marker.size(), end - at - marker.size());
        return;
      }
    }
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      ADD_FAILURE() << "s3rver exited at startup: " << log;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ADD_FAILURE() << "s3rver did not start within 20 s: " << ReadWholeFile(log_path_);
}

S3TestServer::~S3TestServer() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

std::vector<std::string> S3TestServer::UnfinishedUploads() const {
  std::vector<std::string> found;
  std::error_code ec;
  const fs::path bucket = fs::path(data_dir_) / kBucket;
  for (const auto& e : fs::directory_iterator(bucket, ec)) {
    // s3rver keeps uploads in "<bucket>/<name>._S3rver_uploads/<upload id>/" style entries.
    if (e.path().filename().string().find("uploads") == std::string::npos) continue;
    for (const auto& u : fs::directory_iterator(e.path(), ec)) found.push_back(u.path().string());
  }
  return found;
}

}  // namespace xet::testing
