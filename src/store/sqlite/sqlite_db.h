// SqliteDb / SqliteStatement: RAII ownership of a sqlite3 connection and its prepared
// statements, with SQLite result codes turned into Status values.
//
// A connection is used by one thread at a time (the caller arranges that: the index leases
// read connections from a pool and gives the write connection to one thread). Statements
// are prepared once per connection and cached by SQL text; Prepare() hands out a
// ScopedStatement that resets the statement and clears its bindings when it goes out of
// scope, so no statement ever holds a read transaction open by accident.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace xet {

// Maps a SQLite result code to a Status: constraint violations -> InvalidArgument,
// corruption -> Corruption, a full database or disk (SQLITE_FULL, or an SQLITE_IOERR_*
// whose system errno is ENOSPC/EDQUOT) -> InsufficientStorage, other I/O errors -> IoError,
// the rest -> Internal. `db` (may be null) supplies the message and the system errno.
Status SqliteStatus(int rc, std::string_view context, sqlite3* db);

class SqliteStatement {
 public:
  explicit SqliteStatement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  ~SqliteStatement();

  // Parameters are 1-based, as in SQLite. Blobs and text are bound without copying: the
  // bytes must stay alive until the statement is reset.
  Status BindBlob(int index, std::span<const uint8_t> bytes);
  Status BindText(int index, std::string_view text);
  Status BindInt64(int index, int64_t value);
  Status BindNull(int index);

  // Advances: true when a row is available, false when done.
  Result<bool> Step();
  // Steps to completion, ignoring rows.
  Status Run();

  // Column accessors for the current row (0-based). Blob/text views are valid until the
  // next Step or reset.
  bool ColumnIsNull(int col);
  int64_t ColumnInt64(int col);
  std::span<const uint8_t> ColumnBlob(int col);
  std::string_view ColumnText(int col);

  void Reset();

 private:
  sqlite3_stmt* stmt_;
};

// Resets the statement it refers to on destruction.
class ScopedStatement {
 public:
  explicit ScopedStatement(SqliteStatement* stmt) : stmt_(stmt) {}
  ScopedStatement(ScopedStatement&& other) noexcept : stmt_(other.stmt_) { other.stmt_ = nullptr; }
  ScopedStatement(const ScopedStatement&) = delete;
  ScopedStatement& operator=(const ScopedStatement&) = delete;
  ScopedStatement& operator=(ScopedStatement&&) = delete;
  ~ScopedStatement() {
    if (stmt_ != nullptr) stmt_->Reset();
  }
  SqliteStatement* operator->() const { return stmt_; }
  SqliteStatement& operator*() const { return *stmt_; }

 private:
  SqliteStatement* stmt_;
};

class SqliteDb {
 public:
  // Opens (read_only = false: creating if missing) the database at `path`, with extended
  // result codes and `busy_timeout_ms` set.
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path, bool read_only,
                                                int busy_timeout_ms);
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;
  ~SqliteDb();

  // Runs one or more statements without results (schema, pragmas, transaction control).
  Status Exec(std::string_view sql);
  // Runs a statement whose single result is one text value (e.g. a pragma).
  Result<std::string> QueryText(std::string_view sql);
  // The cached prepared statement for `sql`, prepared on first use.
  Result<ScopedStatement> Prepare(std::string_view sql);

  int64_t Changes() const;
  int64_t LastInsertRowid() const;
  // True when no transaction is open (e.g. SQLite rolled one back after an error).
  bool InAutocommit() const;
  sqlite3* raw() const { return db_; }

 private:
  explicit SqliteDb(sqlite3* db) : db_(db) {}

  sqlite3* db_;
  // Declared after db_ so statements are finalized before the connection closes.
  std::unordered_map<std::string, std::unique_ptr<SqliteStatement>> cache_;
};

}  // namespace xet
