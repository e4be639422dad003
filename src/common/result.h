// Result<T>: either a value of type T or a non-OK Status (an `expected`-style type;
// std::expected is C++23 and not available to this toolchain).
#pragma once

#include <cassert>
#include <utility>
#include <variant>

#include "common/status.h"

namespace xet {

template <typename T>
class [[nodiscard]] Result {
 public:
  // Implicit on purpose, so functions can `return value;` or `return status;`.
  Result(T value) : v_(std::move(value)) {}        // NOLINT
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(v_).ok() && "Result constructed from an OK Status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  // The error; OK when a value is held.
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(v_); }

  // Requires ok().
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace xet

#define XET_CONCAT_INNER(a, b) a##b
#define XET_CONCAT(a, b) XET_CONCAT_INNER(a, b)
// `XET_ASSIGN_OR_RETURN(auto x, Foo());` declares x from Foo()'s value, or returns its Status.
#define XET_ASSIGN_OR_RETURN(decl, expr)                                                      \
  auto XET_CONCAT(_xet_res_, __LINE__) = (expr);                                              \
  if (!XET_CONCAT(_xet_res_, __LINE__).ok()) return XET_CONCAT(_xet_res_, __LINE__).status(); \
  decl = std::move(XET_CONCAT(_xet_res_, __LINE__)).value()
