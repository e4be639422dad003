#include "store/postgres/pg_connection.h"

#include <cstring>
#include <limits>

namespace xet {
namespace {

constexpr Oid kBoolOid = 16, kByteaOid = 17, kInt8Oid = 20, kTextOid = 25;
constexpr Oid kTextArrayOid = 1009, kByteaArrayOid = 1001, kInt8ArrayOid = 1016;

void PutBe32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}
void PutBe64(std::string& out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}
uint64_t GetBe(const char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

// A Status code for a SQLSTATE: what the callers and the retry loop react to.
Status::Code CodeFor(std::string_view state) {
  if (state == kPgSerializationFailure || state == kPgDeadlockDetected) {
    return Status::Code::kUnavailable;
  }
  if (state == kPgUniqueViolation) return Status::Code::kAlreadyExists;
  if (state == kPgForeignKeyViolation || state == kPgXetInvalidArgument) {
    return Status::Code::kInvalidArgument;
  }
  if (state == kPgXetUnavailable) return Status::Code::kUnavailable;
  // Class 22, data exceptions: a value the column cannot hold (text that is not UTF-8 or
  // holds a NUL, a number out of range) is bad input, not a storage failure.
  if (state.starts_with("22")) return Status::Code::kInvalidArgument;
  if (state.starts_with("08") || state.starts_with("57P")) return Status::Code::kUnavailable;
  if (state == "53100") return Status::Code::kInsufficientStorage;
  return Status::Code::kIoError;
}

Status MakeStatus(Status::Code code, const std::string& msg) {
  switch (code) {
    case Status::Code::kUnavailable:
      return Status::Unavailable(msg);
    case Status::Code::kAlreadyExists:
      return Status::AlreadyExists(msg);
    case Status::Code::kInvalidArgument:
      return Status::InvalidArgument(msg);
    case Status::Code::kInsufficientStorage:
      return Status::InsufficientStorage(msg);
    default:
      return Status::IoError(msg);
  }
}

// libpq's messages end with a newline; a Status message is one line.
std::string OneLine(const char* text) {
  std::string s = text == nullptr ? "" : text;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  for (char& c : s) {
    if (c == '\n') c = ' ';
  }
  return s;
}

}  // namespace

// --- PgResult ---

std::span<const uint8_t> PgResult::Bytes(int row, int col) const {
  return {reinterpret_cast<const uint8_t*>(PQgetvalue(res_.get(), row, col)),
          static_cast<size_t>(PQgetlength(res_.get(), row, col))};
}

std::string_view PgResult::Text(int row, int col) const {
  return {PQgetvalue(res_.get(), row, col), static_cast<size_t>(PQgetlength(res_.get(), row, col))};
}

int64_t PgResult::Int(int row, int col) const {
  const int len = PQgetlength(res_.get(), row, col);
  const uint64_t raw = GetBe(PQgetvalue(res_.get(), row, col), len);
  switch (len) {
    case 1:
      return static_cast<int64_t>(raw);  // bool
    case 2:
      return static_cast<int16_t>(raw);
    case 4:
      return static_cast<int32_t>(raw);
    default:
      return static_cast<int64_t>(raw);
  }
}

Result<Hash> PgResult::HashAt(int row, int col, const char* what) const {
  const std::span<const uint8_t> b = Bytes(row, col);
  if (IsNull(row, col) || b.size() != Hash::kSize) {
    return Status::Corruption(std::string("index ") + what + " of " + std::to_string(b.size()) +
                              " bytes, expected 32");
  }
  return Hash::FromBytes(b.data());
}

Result<uint64_t> PgResult::SizeAt(int row, int col, const char* what) const {
  const int64_t v = Int(row, col);
  if (v < 0) return Status::Corruption(std::string("index ") + what + " is negative");
  return static_cast<uint64_t>(v);
}

int64_t PgResult::Affected() const {
  const char* n = PQcmdTuples(res_.get());
  return n == nullptr || *n == '\0' ? 0 : std::stoll(n);
}

// --- PgParams ---

PgParams& PgParams::Add(Oid type, std::string bytes, bool null) {
  values_.push_back(std::move(bytes));
  nulls_.push_back(null);
  types_.push_back(type);
  formats_.push_back(1);
  lengths_.push_back(static_cast<int>(values_.back().size()));
  // values_ may have reallocated (and short strings live inside the string objects).
  ptrs_.clear();
  for (size_t i = 0; i < values_.size(); ++i) {
    ptrs_.push_back(nulls_[i] ? nullptr : values_[i].data());
  }
  return *this;
}

PgParams& PgParams::Bytes(std::span<const uint8_t> v) {
  return Add(kByteaOid, std::string(reinterpret_cast<const char*>(v.data()), v.size()));
}
PgParams& PgParams::Bytes(std::string_view v) { return Add(kByteaOid, std::string(v)); }
PgParams& PgParams::OptHash(const std::optional<xet::Hash>& h) {
  if (!h) return Add(kByteaOid, std::string(), /*null=*/true);
  return Hash(*h);
}
PgParams& PgParams::OptBytes(const std::optional<std::string>& v) {
  if (!v) return Add(kByteaOid, std::string(), /*null=*/true);
  return Bytes(std::string_view(*v));
}
PgParams& PgParams::Text(std::string_view v) { return Add(kTextOid, std::string(v)); }
PgParams& PgParams::Int(int64_t v) {
  std::string b;
  PutBe64(b, static_cast<uint64_t>(v));
  return Add(kInt8Oid, std::move(b));
}
PgParams& PgParams::Bool(bool v) { return Add(kBoolOid, std::string(1, v ? '\1' : '\0')); }

PgParams& PgParams::Array(Oid elem_type, size_t n, bool any_null,
                          const std::function<std::optional<std::string_view>(size_t)>& elem) {
  std::string b;
  PutBe32(b, n == 0 ? 0 : 1);  // dimensions
  PutBe32(b, any_null ? 1 : 0);
  PutBe32(b, elem_type);
  if (n > 0) {
    PutBe32(b, static_cast<uint32_t>(n));
    PutBe32(b, 1);  // lower bound
  }
  for (size_t i = 0; i < n; ++i) {
    const std::optional<std::string_view> v = elem(i);
    if (!v) {
      PutBe32(b, 0xffffffffu);
      continue;
    }
    PutBe32(b, static_cast<uint32_t>(v->size()));
    b.append(*v);
  }
  const Oid array_type = elem_type == kByteaOid  ? kByteaArrayOid
                         : elem_type == kInt8Oid ? kInt8ArrayOid
                                                 : kTextArrayOid;
  return Add(array_type, std::move(b));
}

PgParams& PgParams::HashArray(std::span<const xet::Hash> v) {
  return Array(kByteaOid, v.size(), false, [&](size_t i) -> std::optional<std::string_view> {
    return std::string_view(reinterpret_cast<const char*>(v[i].data()), 32);
  });
}

PgParams& PgParams::OptBytesArray(std::span<const std::optional<std::vector<uint8_t>>> v) {
  bool any_null = false;
  for (const auto& e : v) any_null |= !e.has_value();
  return Array(kByteaOid, v.size(), any_null, [&](size_t i) -> std::optional<std::string_view> {
    if (!v[i]) return std::nullopt;
    return std::string_view(reinterpret_cast<const char*>(v[i]->data()), v[i]->size());
  });
}

PgParams& PgParams::IntArray(std::span<const int64_t> v) {
  std::vector<std::string> be(v.size());
  for (size_t i = 0; i < v.size(); ++i) PutBe64(be[i], static_cast<uint64_t>(v[i]));
  return Array(kInt8Oid, v.size(), false,
               [&](size_t i) -> std::optional<std::string_view> { return be[i]; });
}

PgParams& PgParams::BytesArray(std::span<const std::string> v) {
  return Array(kByteaOid, v.size(), false,
               [&](size_t i) -> std::optional<std::string_view> { return v[i]; });
}

PgParams& PgParams::TextArray(std::span<const std::string> v) {
  return Array(kTextOid, v.size(), false,
               [&](size_t i) -> std::optional<std::string_view> { return v[i]; });
}

// --- PgConnection ---

Result<std::unique_ptr<PgConnection>> PgConnection::Connect(const std::string& conninfo) {
  PGconn* raw = PQconnectdb(conninfo.c_str());
  if (raw == nullptr) return Status::ResourceExhausted("postgres: out of memory");
  std::unique_ptr<PgConnection> conn(new PgConnection(raw));
  if (PQstatus(raw) != CONNECTION_OK) {
    return Status::Unavailable("postgres: cannot connect: " + OneLine(PQerrorMessage(raw)));
  }
  // NOTICEs (e.g. "relation already exists, skipping") are not errors: keep them off stderr.
  PQsetNoticeProcessor(
      raw, [](void*, const char*) {}, nullptr);
  // Text parameters and results are UTF-8 whatever the client's locale says. Statements run
  // outside RunTransaction (ExecOnce) are READ COMMITTED whatever the server's default:
  // xet_commit_shard (pg_schema.cc) relies on a fresh snapshot per query.
  XET_RETURN_IF_ERROR(conn->ExecSimple(
      "SET client_encoding = 'UTF8'; SET default_transaction_isolation = 'read committed'"));
  return conn;
}

bool PgConnection::healthy() const {
  if (PQstatus(conn_.get()) != CONNECTION_OK) return false;
  const PGTransactionStatusType t = PQtransactionStatus(conn_.get());
  return t == PQTRANS_IDLE;
}

Status PgConnection::Failure(const PGresult* res, std::string_view what) {
  const char* state = res == nullptr ? nullptr : PQresultErrorField(res, PG_DIAG_SQLSTATE);
  sqlstate_ = state == nullptr ? "" : state;
  const std::string msg =
      std::string("postgres ") + std::string(what) + ": " +
      OneLine(res != nullptr ? PQresultErrorMessage(res) : PQerrorMessage(conn_.get()));
  if (PQstatus(conn_.get()) != CONNECTION_OK) return Status::Unavailable(msg);
  if (sqlstate_.empty()) return Status::IoError(msg);
  if (sqlstate_.starts_with("XS")) {  // raised by the index's own SQL: its message as it is
    return MakeStatus(CodeFor(sqlstate_),
                      OneLine(PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY)));
  }
  return MakeStatus(CodeFor(sqlstate_), msg + " (SQLSTATE " + sqlstate_ + ")");
}

Result<PgResult> PgConnection::Exec(const std::string& sql, const PgParams& params) {
  sqlstate_.clear();
  auto it = prepared_.find(sql);
  if (it == prepared_.end()) {
    const std::string name = "xet" + std::to_string(prepared_.size());
    PgResult prep(PQprepare(conn_.get(), name.c_str(), sql.c_str(), params.size(), params.types()));
    if (PQresultStatus(prep.get()) != PGRES_COMMAND_OK) return Failure(prep.get(), "prepare");
    it = prepared_.emplace(sql, name).first;
  }
  PGresult* raw = PQexecPrepared(conn_.get(), it->second.c_str(), params.size(), params.values(),
                                 params.lengths(), params.formats(), /*resultFormat=*/1);
  PgResult res(raw);
  const ExecStatusType st = PQresultStatus(raw);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) return Failure(raw, "query");
  return res;
}

Status PgConnection::ExecSimple(const std::string& sql) {
  sqlstate_.clear();
  PGresult* raw = PQexec(conn_.get(), sql.c_str());
  PgResult res(raw);
  const ExecStatusType st = PQresultStatus(raw);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) return Failure(raw, "command");
  return Status::Ok();
}

}  // namespace xet
