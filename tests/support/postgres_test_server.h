// A real PostgreSQL server for tests: Debian's `postgresql` binaries (initdb, postgres),
// run on a cluster of its own in a scratch directory, listening on a Unix socket only (no
// TCP port, so nothing clashes), with trust authentication for the role `xet`. As root the
// server runs as the `postgres` system user (initdb and postgres refuse root).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace xet::testing {

class PostgresTestServer {
 public:
  // The server of this test process, started on first use. Fails the test, with the command
  // that installs PostgreSQL, when the binaries are missing or the server does not start.
  static PostgresTestServer& Shared();

  // Creates a cluster under `root_dir` (which must not exist yet or be empty) and starts it.
  explicit PostgresTestServer(std::string root_dir);
  ~PostgresTestServer();  // stops the server (fast shutdown)
  PostgresTestServer(const PostgresTestServer&) = delete;
  PostgresTestServer& operator=(const PostgresTestServer&) = delete;

  bool started() const { return pid_ > 0; }
  // A libpq URI for database `db` on this server.
  std::string Url(const std::string& db) const;
  // Creates database `db` unless it exists. Returns "" or the error.
  std::string CreateDatabase(const std::string& db) const;
  // Runs one SQL command in database `db` as the superuser. Returns "" or the error.
  std::string Exec(const std::string& db, const std::string& sql) const;

  // Stops the server (fast shutdown: connections are closed) and starts it again on the
  // same cluster and socket. Both fail the test on error.
  void Stop();
  void Start();

 private:
  bool RunAsServerUser(const std::vector<std::string>& args, const std::string& log) const;

  std::string root_;
  std::string data_dir_;
  std::string socket_dir_;
  std::string log_path_;
  pid_t pid_ = -1;
};

// Where the PostgreSQL server binaries are: $XETSTORE_PG_BINDIR, else
// /usr/lib/postgresql/15/bin.
std::string PostgresBinDir();

}  // namespace xet::testing
