// The property checks of a fuzz target. A broken property aborts the process, so that
// libFuzzer reports the input and saves it as a reproducer:
//
//   constexpr xet::fuzz::PropertyCheck Check("my_fuzzer");
//   Check(parsed->size() <= input.size(), "a result larger than its input");
#pragma once

#include <cstdio>
#include <cstdlib>

#include "common/result.h"
#include "common/status.h"

namespace xet::fuzz {

class PropertyCheck {
 public:
  // `target` (the fuzz target's name) must outlive the check: a string literal.
  explicit constexpr PropertyCheck(const char* target) : target_(target) {}

  // Aborts with "<target>: <what>" on stderr unless `ok`.
  void operator()(bool ok, const char* what) const {
    if (!ok) Fail(what);
  }

  // For an input the code under test refused: aborts unless the refusal has `code` and a
  // message.
  void Refusal(const Status& refusal, Status::Code code) const {
    (*this)(refusal.code() == code, "refusal code");
    (*this)(!refusal.message().empty(), "refusal without a message");
  }

  // For an outcome that may be a refusal: false when `outcome` is ok; otherwise checks it as
  // Refusal does and returns true. `if (Check.Refused(r, code)) return 0;`
  bool Refused(const Status& outcome, Status::Code code) const {
    if (outcome.ok()) return false;
    Refusal(outcome, code);
    return true;
  }
  template <typename T>
  bool Refused(const Result<T>& outcome, Status::Code code) const {
    return !outcome.ok() && Refused(outcome.status(), code);
  }

  [[noreturn]] void Fail(const char* what) const {
    std::fprintf(stderr, "%s: %s\n", target_, what);
    std::abort();
  }

 private:
  const char* target_;
};

}  // namespace xet::fuzz
