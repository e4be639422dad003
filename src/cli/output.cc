#include "cli/output.h"

#include <cstdio>
#include <ctime>

namespace xet::cli {

void PrintError(std::string_view what, std::string_view hint) {
  std::fprintf(stderr, "xetstore: error: %.*s\n", static_cast<int>(what.size()), what.data());
  if (!hint.empty()) {
    std::fprintf(stderr, "hint: %.*s\n", static_cast<int>(hint.size()), hint.data());
  }
}

int ReportFailure(const Status& status, std::string_view hint) {
  PrintError(status.message().empty() ? status.ToString() : status.message(), hint);
  return kExitFailure;
}

std::string FormatUtcTime(int64_t unix_ms) {
  if (unix_ms == 0) return "-";
  const std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  if (gmtime_r(&t, &tm) == nullptr) return "-";
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

}  // namespace xet::cli
