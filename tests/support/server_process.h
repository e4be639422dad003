// Runs a real `xetstore serve` process on a loopback ephemeral port for integration tests.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace xet::testing {

class ServerProcess {
 public:
  // Starts `xetstore serve --listen 127.0.0.1:0 --data-dir <data_dir>` plus `extra_args`
  // and waits (up to 15 s) until it prints the URL it serves on. Aborts the test on failure.
  explicit ServerProcess(std::string data_dir, std::vector<std::string> extra_args = {});
  ~ServerProcess();  // SIGKILLs the process if still running
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  const std::string& url() const { return url_; }
  const std::string& data_dir() const { return data_dir_; }
  // The admin token written on first start to <data-dir>/admin-token.
  std::string AdminToken() const;
  // Creates a token with `xetstore token create` on this server's data directory and
  // returns its hf_ secret; `scope` "" makes it unscoped. Fails the test when the command
  // fails.
  std::string CreateToken(const std::string& permission, const std::string& scope) const;
  // Everything the process wrote to stderr so far.
  std::string Log() const;

  // SIGTERM and wait; returns the exit status (WEXITSTATUS), or -1 if it died of a signal.
  int Terminate();
  // SIGKILL and wait.
  void Kill();
  bool running() const { return pid_ > 0; }

 private:
  std::string data_dir_;
  std::string log_path_;
  std::string url_;
  pid_t pid_ = -1;
};

// A fresh empty directory under the test temp dir.
std::string MakeTempDir(const std::string& name);

}  // namespace xet::testing
