// Terminal output helpers shared by all commands: exit codes, one-line errors, times.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace xet::cli {

// Exit codes used by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// Prints "xetstore: error: <what>" (and a hint line when given) to stderr.
void PrintError(std::string_view what, std::string_view hint = {});
// Prints a failed Status as a one-line error; returns kExitFailure.
int ReportFailure(const Status& status, std::string_view hint = {});

// Unix milliseconds as "YYYY-MM-DD HH:MM:SS" in UTC; 0 (unknown) as "-".
std::string FormatUtcTime(int64_t unix_ms);

}  // namespace xet::cli
