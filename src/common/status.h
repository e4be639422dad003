// Status: the outcome of an operation that can fail, carried as a value.
//
// Modeled on LevelDB's Status: cheap to return on success (no allocation), and a
// code plus a one-line human-readable message on failure. Hot paths return Status or
// Result<T> instead of throwing; exceptions are reserved for process boundaries.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace xet {

class Status {
 public:
  enum class Code : int {
    kOk = 0,
    kInvalidArgument,  // malformed or hostile input: a parser rejected it
    kNotFound,
    kCorruption,  // stored or transferred data failed an integrity check
    kIoError,
    kOutOfRange,
    kResourceExhausted,  // a size limit was exceeded
    kUnimplemented,
    kInternal,
    kUnauthenticated,      // no or bad credentials
    kPermissionDenied,     // valid credentials, insufficient scope
    kAlreadyExists,        // a create found the name taken
    kUnavailable,          // a peer could not be reached or is overloaded (retryable)
    kCancelled,            // the caller (or a callback it supplied) stopped the operation
    kInsufficientStorage,  // a disk or quota is full (ENOSPC, EDQUOT, a full database):
                           // nothing was stored; retry once space is freed
  };

  Status() = default;  // OK

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string_view msg) { return {Code::kInvalidArgument, msg}; }
  static Status NotFound(std::string_view msg) { return {Code::kNotFound, msg}; }
  static Status Corruption(std::string_view msg) { return {Code::kCorruption, msg}; }
  static Status IoError(std::string_view msg) { return {Code::kIoError, msg}; }
  static Status OutOfRange(std::string_view msg) { return {Code::kOutOfRange, msg}; }
  static Status ResourceExhausted(std::string_view msg) { return {Code::kResourceExhausted, msg}; }
  static Status Unimplemented(std::string_view msg) { return {Code::kUnimplemented, msg}; }
  static Status Internal(std::string_view msg) { return {Code::kInternal, msg}; }
  static Status Unauthenticated(std::string_view msg) { return {Code::kUnauthenticated, msg}; }
  static Status PermissionDenied(std::string_view msg) { return {Code::kPermissionDenied, msg}; }
  static Status AlreadyExists(std::string_view msg) { return {Code::kAlreadyExists, msg}; }
  static Status Unavailable(std::string_view msg) { return {Code::kUnavailable, msg}; }
  static Status Cancelled(std::string_view msg) { return {Code::kCancelled, msg}; }
  static Status InsufficientStorage(std::string_view msg) {
    return {Code::kInsufficientStorage, msg};
  }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  // The message without the code name; empty for OK.
  const std::string& message() const;
  // "<CodeName>: <message>", or "OK".
  std::string ToString() const;

  // Returns a copy whose message is "<context>: <message>" (OK stays OK).
  Status WithContext(std::string_view context) const;

 private:
  Status(Code code, std::string_view msg)
      : code_(code), msg_(std::make_shared<const std::string>(msg)) {}

  Code code_ = Code::kOk;
  std::shared_ptr<const std::string> msg_;  // null when OK
};

const char* CodeName(Status::Code code);

}  // namespace xet

// Returns early from the enclosing function if `expr` yields a non-OK Status.
#define XET_RETURN_IF_ERROR(expr)      \
  do {                                 \
    ::xet::Status _xet_st = (expr);    \
    if (!_xet_st.ok()) return _xet_st; \
  } while (0)
