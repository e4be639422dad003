#include "support/postgres_test_server.h"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <thread>

#include "support/file_contents.h"
#include "support/scratch_root.h"

namespace xet::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kPort = 5432;  // only names the socket file, inside our own directory
constexpr const char* kRole = "xet";
constexpr const char* kInstallHint =
    "install PostgreSQL with `apt-get install postgresql` (or scripts/install-deps), or point "
    "XETSTORE_PG_BINDIR at its bin directory";

// The unprivileged user the server runs as when this process is root.
const passwd* ServerUser() {
  if (::geteuid() != 0) return nullptr;
  return ::getpwnam("postgres");
}

void ChownToServerUser(const std::string& path) {
  if (const passwd* pw = ServerUser()) {
    if (::chown(path.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
      ADD_FAILURE() << "chown " << path << " failed";
    }
  }
}

// In a forked child: output to `log`, the server user's identity, then exec `args`.
[[noreturn]] void ExecAsServerUser(const std::vector<std::string>& args, const std::string& log,
                                   bool die_with_parent) {
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd >= 0) {
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::close(fd);
  }
  if (::geteuid() == 0) {
    const passwd* pw = ServerUser();
    if (pw == nullptr || ::setgroups(0, nullptr) != 0 || ::setgid(pw->pw_gid) != 0 ||
        ::setuid(pw->pw_uid) != 0) {
      ::_exit(126);
    }
  }
  // After setuid, which clears it: the server dies with the test process.
  if (die_with_parent) ::prctl(PR_SET_PDEATHSIG, SIGQUIT);
  std::vector<char*> argv;
  std::vector<std::string> copy = args;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execv(argv[0], argv.data());
  ::_exit(127);
}

struct PgConnCloser {
  void operator()(PGconn* c) const { PQfinish(c); }
};

}  // namespace

std::string PostgresBinDir() {
  if (const char* p = std::getenv("XETSTORE_PG_BINDIR"); p != nullptr && *p != '\0') return p;
  return "/usr/lib/postgresql/15/bin";
}

PostgresTestServer& PostgresTestServer::Shared() {
  static const ScratchRoot root("xetstore-pg-");
  static PostgresTestServer server((root.path() / "cluster").string());
  return server;
}

PostgresTestServer::PostgresTestServer(std::string root_dir) : root_(std::move(root_dir)) {
  const std::string bin = PostgresBinDir();
  for (const char* tool : {"initdb", "postgres"}) {
    if (::access((bin + "/" + tool).c_str(), X_OK) != 0) {
      ADD_FAILURE() << "PostgreSQL's " << tool << " not found in " << bin << ": " << kInstallHint;
      return;
    }
  }
  if (::geteuid() == 0 && ServerUser() == nullptr) {
    ADD_FAILURE() << "running as root, but there is no `postgres` user to run the server as: "
                  << kInstallHint;
    return;
  }
  data_dir_ = root_ + "/data";
  socket_dir_ = root_ + "/sock";
  log_path_ = root_ + "/server.log";
  fs::create_directories(root_);
  fs::create_directories(socket_dir_);
  // The scratch root above `root_` must be traversable by the server user.
  ChownToServerUser(fs::path(root_).parent_path().string());
  ChownToServerUser(root_);
  ChownToServerUser(socket_dir_);
  if (!RunAsServerUser({bin + "/initdb", "-D", data_dir_, "-U", kRole, "--auth=trust",
                        "--encoding=UTF8", "--locale=C", "--no-sync"},
                       root_ + "/initdb.log")) {
    ADD_FAILURE() << "initdb failed: " << ReadWholeFile(root_ + "/initdb.log");
    return;
  }
  Start();
}

PostgresTestServer::~PostgresTestServer() {
  if (pid_ > 0) {
    ::kill(pid_, SIGINT);  // fast shutdown
    ::waitpid(pid_, nullptr, 0);
  }
}

bool PostgresTestServer::RunAsServerUser(const std::vector<std::string>& args,
                                         const std::string& log) const {
  const pid_t pid = ::fork();
  if (pid == 0) ExecAsServerUser(args, log, /*die_with_parent=*/false);
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void PostgresTestServer::Start() {
  if (data_dir_.empty() || pid_ > 0) return;
  const std::vector<std::string> args = {PostgresBinDir() + "/postgres",
                                         "-D",
                                         data_dir_,
                                         "-k",
                                         socket_dir_,
                                         "-p",
                                         std::to_string(kPort),
                                         "-c",
                                         "listen_addresses=",
                                         "-c",
                                         "fsync=off",
                                         "-c",
                                         "max_connections=300",
                                         "-c",
                                         "shared_buffers=32MB"};
  pid_ = ::fork();
  if (pid_ == 0) ExecAsServerUser(args, log_path_, /*die_with_parent=*/true);
  const std::string ping = "host=" + socket_dir_ + " port=" + std::to_string(kPort) +
                           " user=" + kRole + " dbname=postgres";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    if (PQping(ping.c_str()) == PQPING_OK) return;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      ADD_FAILURE() << "postgres exited at startup: " << ReadWholeFile(log_path_);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ADD_FAILURE() << "postgres did not start within 30 s: " << ReadWholeFile(log_path_);
}

void PostgresTestServer::Stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGINT);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

std::string PostgresTestServer::Url(const std::string& db) const {
  return "postgresql:///" + db + "?host=" + socket_dir_ + "&port=" + std::to_string(kPort) +
         "&user=" + kRole;
}

std::string PostgresTestServer::Exec(const std::string& db, const std::string& sql) const {
  std::unique_ptr<PGconn, PgConnCloser> conn(PQconnectdb(Url(db).c_str()));
  if (PQstatus(conn.get()) != CONNECTION_OK) return PQerrorMessage(conn.get());
  PGresult* res = PQexec(conn.get(), sql.c_str());
  const ExecStatusType st = PQresultStatus(res);
  std::string error;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) error = PQresultErrorMessage(res);
  PQclear(res);
  return error;
}

std::string PostgresTestServer::CreateDatabase(const std::string& db) const {
  std::string error = Exec("postgres", "CREATE DATABASE \"" + db + "\"");
  if (error.find("already exists") != std::string::npos) return "";
  return error;
}

}  // namespace xet::testing
