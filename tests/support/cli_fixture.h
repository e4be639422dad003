// End-to-end tests of the client commands: a real `xetstore serve`, and the real xetstore
// binary run against it with a clean environment (no XETSTORE_*/HF_* connection variables
// inherited from whoever runs the tests).
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "support/server_process.h"
#include "support/subprocess.h"

namespace xet::testing {

// The environment variables through which the client finds its server and token; every
// helper below removes them before adding its own.
inline constexpr const char* kConnectionEnvVars[] = {"XETSTORE_ENDPOINT", "HF_ENDPOINT",
                                                     "XETSTORE_TOKEN", "HF_TOKEN"};

// Runs `/bin/sh -c <command>` and captures its stdout and stderr.
CommandResult RunShell(const std::string& command);

// Runs `xetstore <args>` (shell syntax, like RunXetstore) with the connection variables
// removed and `env` ("NAME=value ...", may be empty) set instead.
CommandResult RunXetstoreEnv(const std::string& env, const std::string& args);

// The client cache directory every client the fixture runs gets as XETSTORE_CACHE_DIR (one
// per test process, so tests never read or fill the user's ~/.cache).
const std::string& ClientCacheDir();

// A xetstore process in the background (for interrupt tests): stdin is a pipe the test
// writes, stdout and stderr are collected; the connection variables are removed from its
// environment.
class BackgroundXetstore {
 public:
  explicit BackgroundXetstore(const std::vector<std::string>& args);
  ~BackgroundXetstore();  // SIGKILLs and reaps the process if still running
  BackgroundXetstore(const BackgroundXetstore&) = delete;
  BackgroundXetstore& operator=(const BackgroundXetstore&) = delete;

  // Writes all of `data` to the process's stdin; false if the pipe is closed.
  bool WriteStdin(std::string_view data);
  void CloseStdin();
  void Signal(int sig);
  // Waits for the process to end (closing stdin first) and returns what it printed.
  CommandResult Wait();

 private:
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  std::string out_path_, err_path_;
};

// A file of a bucket as `xetstore ls --json` lists it.
struct ListedFile {
  uint64_t size = 0;
  std::string xet_hash;
  int64_t mtime = 0;  // unix ms
};

// A fresh server and its admin token per test, with helpers running the client as the
// admin, as another token or anonymously.
class CliServerTest : public ::testing::Test {
 protected:
  void SetUp() override;

  // `xetstore <args>` as the admin. The connection comes from XETSTORE_ENDPOINT and
  // XETSTORE_TOKEN, so `args` may hold redirections anywhere.
  CommandResult Run(const std::string& args) { return RunAs(admin_, args); }
  // The same as `token` ("" = anonymous: no token variable at all).
  CommandResult RunAs(const std::string& token, const std::string& args);

  // Creates bucket `id` ("NS/NAME") as the admin; fails the test if that fails.
  void CreateBucket(const std::string& id, bool is_public = false);

  // Every file under `prefix` of `bucket` ("NS/NAME"), by path, from `ls -R --json`.
  std::map<std::string, ListedFile> RemoteFiles(const std::string& bucket,
                                                const std::string& prefix = "");
  // The Xet hash `xetstore hash` computes for a local file (independent of any upload path).
  static std::string XetHashOf(const std::string& path);

  // SIGKILLs the server, as a crash would.
  void KillServer() { server_->Kill(); }
  // Starts the server again on the same data directory (on a new port, which Run,
  // RunAs and url() follow); the admin token stays the same.
  void RestartServer();

  const ServerProcess& server() const { return *server_; }
  const std::string& admin_token() const { return admin_; }
  const std::string& url() const { return server_->url(); }
  // A fresh directory for this test's local files.
  std::string LocalDir(const std::string& name) const;

 private:
  std::unique_ptr<ServerProcess> server_;
  std::string admin_;
};

// Writes `data` to `path`, creating parent directories.
void WriteLocalFile(const std::string& path, std::string_view data);
// The whole content of `path` ("" when it cannot be read; tests compare contents).
std::string ReadLocalFile(const std::string& path);

// `n` seeded random bytes as a string.
std::string RandomString(size_t n, uint64_t seed);
// A local file's modification time in unix milliseconds (a test failure if it cannot be
// stat'ed).
int64_t LocalMtimeMs(const std::string& path);

}  // namespace xet::testing
