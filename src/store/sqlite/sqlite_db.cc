#include "store/sqlite/sqlite_db.h"

#include <sqlite3.h>

#include <climits>

#include "common/errno_status.h"

namespace xet {

Status SqliteStatus(int rc, std::string_view context, sqlite3* db) {
  std::string msg(context);
  msg.append(": ");
  msg.append(db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  switch (rc & 0xff) {
    case SQLITE_CONSTRAINT:
    case SQLITE_TOOBIG:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
      return Status::InvalidArgument(msg);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status::Corruption(msg);
    case SQLITE_FULL:
      return Status::InsufficientStorage(msg);
    case SQLITE_IOERR:
      // The unix VFS reports a short write on a full disk as SQLITE_FULL, but an fsync,
      // truncate or shared-memory extension that hits ENOSPC as SQLITE_IOERR_*.
      if (db != nullptr && IsNoSpaceErrno(sqlite3_system_errno(db))) {
        return Status::InsufficientStorage(msg);
      }
      return Status::IoError(msg);
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::IoError(msg);
    default:
      return Status::Internal(msg);
  }
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

Status SqliteStatement::BindBlob(int index, std::span<const uint8_t> bytes) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return Status::ResourceExhausted("blob too large for SQLite");
  }
  // A zero-length blob must not bind as NULL: give SQLite a non-null pointer.
  static constexpr uint8_t kEmpty = 0;
  const void* data = bytes.empty() ? &kEmpty : bytes.data();
  const int rc =
      sqlite3_bind_blob(stmt_, index, data, static_cast<int>(bytes.size()), SQLITE_STATIC);
  if (rc != SQLITE_OK) return SqliteStatus(rc, "bind blob", sqlite3_db_handle(stmt_));
  return Status::Ok();
}

Status SqliteStatement::BindText(int index, std::string_view text) {
  if (text.size() > static_cast<size_t>(INT_MAX)) {
    return Status::ResourceExhausted("text too large for SQLite");
  }
  // A null pointer would bind NULL, not the empty string (a default string_view has one).
  const char* data = text.data() != nullptr ? text.data() : "";
  const int rc =
      sqlite3_bind_text(stmt_, index, data, static_cast<int>(text.size()), SQLITE_STATIC);
  if (rc != SQLITE_OK) return SqliteStatus(rc, "bind text", sqlite3_db_handle(stmt_));
  return Status::Ok();
}

Status SqliteStatement::BindInt64(int index, int64_t value) {
  const int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK) return SqliteStatus(rc, "bind integer", sqlite3_db_handle(stmt_));
  return Status::Ok();
}

Status SqliteStatement::BindNull(int index) {
  const int rc = sqlite3_bind_null(stmt_, index);
  if (rc != SQLITE_OK) return SqliteStatus(rc, "bind null", sqlite3_db_handle(stmt_));
  return Status::Ok();
}

Result<bool> SqliteStatement::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteStatus(rc, sqlite3_sql(stmt_), sqlite3_db_handle(stmt_));
}

Status SqliteStatement::Run() {
  while (true) {
    XET_ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return Status::Ok();
  }
}

bool SqliteStatement::ColumnIsNull(int col) {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

int64_t SqliteStatement::ColumnInt64(int col) { return sqlite3_column_int64(stmt_, col); }

std::span<const uint8_t> SqliteStatement::ColumnBlob(int col) {
  const void* data = sqlite3_column_blob(stmt_, col);
  const int n = sqlite3_column_bytes(stmt_, col);
  if (data == nullptr || n <= 0) return {};
  return {static_cast<const uint8_t*>(data), static_cast<size_t>(n)};
}

std::string_view SqliteStatement::ColumnText(int col) {
  const unsigned char* data = sqlite3_column_text(stmt_, col);
  const int n = sqlite3_column_bytes(stmt_, col);
  if (data == nullptr || n <= 0) return {};
  return {reinterpret_cast<const char*>(data), static_cast<size_t>(n)};
}

void SqliteStatement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path, bool read_only,
                                                 int busy_timeout_ms) {
  sqlite3* raw = nullptr;
  const int flags =
      (read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
      SQLITE_OPEN_NOMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  // The handle is ours even when opening failed.
  std::unique_ptr<SqliteDb> db(new SqliteDb(raw));
  if (rc != SQLITE_OK) return SqliteStatus(rc, "open index database " + path, raw);
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, busy_timeout_ms);
  return db;
}

SqliteDb::~SqliteDb() {
  cache_.clear();
  sqlite3_close_v2(db_);
}

Status SqliteDb::Exec(std::string_view sql) {
  const std::string text(sql);
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err);
  if (err != nullptr) sqlite3_free(err);
  if (rc != SQLITE_OK) return SqliteStatus(rc, text.substr(0, 80), db_);
  return Status::Ok();
}

Result<std::string> SqliteDb::QueryText(std::string_view sql) {
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt, Prepare(sql));
  XET_ASSIGN_OR_RETURN(bool row, stmt->Step());
  if (!row) return Status::Internal("no result from " + std::string(sql));
  std::string value(stmt->ColumnText(0));
  XET_RETURN_IF_ERROR(stmt->Run());
  return value;
}

Result<ScopedStatement> SqliteDb::Prepare(std::string_view sql) {
  std::string key(sql);
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    sqlite3_stmt* stmt = nullptr;
    const int rc = sqlite3_prepare_v3(db_, key.data(), static_cast<int>(key.size()),
                                      SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) {
      sqlite3_finalize(stmt);
      return SqliteStatus(rc, "prepare " + key, db_);
    }
    it = cache_.emplace(std::move(key), std::make_unique<SqliteStatement>(stmt)).first;
  }
  return ScopedStatement(it->second.get());
}

int64_t SqliteDb::Changes() const { return sqlite3_changes64(db_); }
int64_t SqliteDb::LastInsertRowid() const { return sqlite3_last_insert_rowid(db_); }
bool SqliteDb::InAutocommit() const { return sqlite3_get_autocommit(db_) != 0; }

}  // namespace xet
