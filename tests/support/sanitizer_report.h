// Fails the current test when a child process's output holds a sanitizer report.
//
// A sanitizer-built `xetstore` child (the server a test starts, or a client command it
// runs) reports a race, a memory error or undefined behaviour on its stderr and, with
// TSAN_OPTIONS=halt_on_error=1 (ASan aborts by default), exits with an error code the test
// may never look at: a server reaped by SIGKILL at teardown, or a command expected to fail
// anyway. These checks make such a report fail the test that caused it.
#pragma once

#include <string_view>

namespace xet::testing {

// True when `output` holds a ThreadSanitizer, AddressSanitizer, LeakSanitizer or
// UndefinedBehaviorSanitizer report.
bool HasSanitizerReport(std::string_view output);

// ADD_FAILUREs (naming `what`, with the report) when `output` holds a sanitizer report.
void ExpectNoSanitizerReport(std::string_view output, std::string_view what);

}  // namespace xet::testing
