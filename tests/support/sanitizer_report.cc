#include "support/sanitizer_report.h"

#include <gtest/gtest.h>

#include <array>
#include <string>

namespace xet::testing {
namespace {

// The first line each sanitizer runtime prints for a report.
constexpr std::array<std::string_view, 5> kReportMarkers = {
    "WARNING: ThreadSanitizer:", "ERROR: ThreadSanitizer:", "ERROR: AddressSanitizer:",
    "ERROR: LeakSanitizer:", ": runtime error: "};

size_t FirstReport(std::string_view output) {
  size_t first = std::string_view::npos;
  for (const std::string_view marker : kReportMarkers) {
    const size_t at = output.find(marker);
    if (at < first) first = at;
  }
  return first;
}

}  // namespace

bool HasSanitizerReport(std::string_view output) {
  return FirstReport(output) != std::string_view::npos;
}

void ExpectNoSanitizerReport(std::string_view output, std::string_view what) {
  const size_t at = FirstReport(output);
  if (at == std::string_view::npos) return;
  // From the start of the report's line, so the banner ("=====") and stack stay readable.
  const size_t line = output.rfind('\n', at);
  const size_t from = line == std::string_view::npos ? 0 : line + 1;
  constexpr size_t kShown = 16 * 1024;  // a report with its stacks fits; a flood is cut
  ADD_FAILURE() << what << " printed a sanitizer report:\n" << output.substr(from, kShown);
}

}  // namespace xet::testing
