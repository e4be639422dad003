// libpq under RAII: PgResult (a PGresult), PgParams (binary query parameters) and
// PgConnection (a PGconn with its prepared statements).
//
// Every query is sent with binary parameters and asks for binary results: hashes, paths and
// record blobs travel as raw bytes (no hex or escaping), integers as big-endian int8. Values
// only ever reach the server as parameters, never spliced into SQL text.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "format/hash.h"

namespace xet {

// SQLSTATEs the index reacts to.
inline constexpr std::string_view kPgSerializationFailure = "40001";
inline constexpr std::string_view kPgDeadlockDetected = "40P01";
inline constexpr std::string_view kPgUniqueViolation = "23505";
inline constexpr std::string_view kPgForeignKeyViolation = "23503";
// Raised by the index's own SQL functions (pg_schema.cc), class XS: the message is the
// index's own, passed on as it is. kPgXetInvalidArgument fails as InvalidArgument,
// kPgXetUnavailable as Unavailable (a refusal to retry later, not a lost connection).
inline constexpr std::string_view kPgXetInvalidArgument = "XS400";
inline constexpr std::string_view kPgXetUnavailable = "XS503";

class PgResult {
 public:
  PgResult() = default;
  explicit PgResult(PGresult* res) : res_(res) {}

  const PGresult* get() const { return res_.get(); }
  int rows() const { return res_ ? PQntuples(res_.get()) : 0; }
  bool IsNull(int row, int col) const { return PQgetisnull(res_.get(), row, col) != 0; }
  std::span<const uint8_t> Bytes(int row, int col) const;
  std::string_view Text(int row, int col) const;
  // An int2, int4 or int8 column (binary), widened.
  int64_t Int(int row, int col) const;
  bool Bool(int row, int col) const { return Int(row, col) != 0; }
  // Corruption unless the column is exactly 32 bytes; `what` names it.
  Result<Hash> HashAt(int row, int col, const char* what) const;
  // A stored size or count; Corruption if negative.
  Result<uint64_t> SizeAt(int row, int col, const char* what) const;
  // The number of rows a command changed (INSERT/UPDATE/DELETE).
  int64_t Affected() const;

 private:
  struct Clear {
    void operator()(PGresult* r) const { PQclear(r); }
  };
  std::unique_ptr<PGresult, Clear> res_;
};

// Parameters of one query, all in binary format, in $1, $2, ... order.
class PgParams {
 public:
  PgParams() = default;
  PgParams(PgParams&&) = default;
  PgParams(const PgParams&) = delete;
  PgParams& operator=(const PgParams&) = delete;

  PgParams& Bytes(std::span<const uint8_t> v);
  PgParams& Bytes(std::string_view v);  // a path or other bytea given as bytes
  PgParams& Hash(const xet::Hash& h) { return Bytes(std::span<const uint8_t>(h.data(), 32)); }
  PgParams& OptHash(const std::optional<xet::Hash>& h);
  PgParams& OptBytes(const std::optional<std::string>& v);  // bytea or NULL
  PgParams& Text(std::string_view v);
  PgParams& Int(int64_t v);
  PgParams& Bool(bool v);
  // One-dimensional arrays ($n::bytea[], $n::int8[], $n::text[]); nullopt elements are NULL.
  PgParams& HashArray(std::span<const xet::Hash> v);
  PgParams& OptBytesArray(std::span<const std::optional<std::vector<uint8_t>>> v);
  PgParams& IntArray(std::span<const int64_t> v);
  PgParams& TextArray(std::span<const std::string> v);
  PgParams& BytesArray(std::span<const std::string> v);

  int size() const { return static_cast<int>(values_.size()); }
  const char* const* values() const { return ptrs_.data(); }
  const int* lengths() const { return lengths_.data(); }
  const int* formats() const { return formats_.data(); }
  const Oid* types() const { return types_.data(); }

 private:
  PgParams& Add(Oid type, std::string bytes, bool null = false);
  PgParams& Array(Oid elem_type, size_t n, bool any_null,
                  const std::function<std::optional<std::string_view>(size_t)>& elem);

  std::vector<std::string> values_;
  std::vector<bool> nulls_;
  std::vector<const char*> ptrs_;
  std::vector<int> lengths_;
  std::vector<int> formats_;
  std::vector<Oid> types_;
};

// One server connection. Not thread-safe: one user at a time (PgPool leases it).
class PgConnection {
 public:
  // Connects with `conninfo` (a "postgres://..." URI or "key=value" string).
  static Result<std::unique_ptr<PgConnection>> Connect(const std::string& conninfo);

  // Runs `sql` (one statement, $n placeholders) as a named prepared statement, prepared on
  // first use on this connection. Fails (with sqlstate() set) on any error: Unavailable for
  // a lost connection, a serialization failure or a deadlock (retryable), AlreadyExists for
  // a unique violation, InvalidArgument for a foreign-key violation or a value the column
  // cannot hold, InsufficientStorage for a full disk, IoError otherwise.
  Result<PgResult> Exec(const std::string& sql, const PgParams& params = PgParams());
  // Runs `sql` as simple text (BEGIN, COMMIT, DDL; several statements allowed). No values.
  Status ExecSimple(const std::string& sql);

  // The SQLSTATE of the last failed call ("" if it did not come from the server).
  const std::string& sqlstate() const { return sqlstate_; }
  // Whether the connection can go back to the pool: connected and outside any transaction.
  bool healthy() const;

 private:
  struct Finish {
    void operator()(PGconn* c) const { PQfinish(c); }
  };
  explicit PgConnection(PGconn* conn) : conn_(conn) {}
  // A Status for a failed result (or connection), recording its SQLSTATE.
  Status Failure(const PGresult* res, std::string_view what);

  std::unique_ptr<PGconn, Finish> conn_;
  std::unordered_map<std::string, std::string> prepared_;  // sql -> statement name
  std::string sqlstate_;
};

}  // namespace xet
