// URL pieces the server and router need: splitting a request target and percent-decoding.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace xet {

// Decodes %XX escapes; with `plus_as_space` (query strings) '+' becomes ' '. Returns
// nullopt for a malformed escape ('%' not followed by two hex digits).
std::optional<std::string> PercentDecode(std::string_view text, bool plus_as_space = false);

// An origin-form request target split at the first '?': "/a/b?x=1" -> {"/a/b", "x=1"}.
struct TargetParts {
  std::string_view path;   // still percent-encoded
  std::string_view query;  // without '?', possibly empty
};
TargetParts SplitTarget(std::string_view target);

}  // namespace xet
