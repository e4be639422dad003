// Parsing JSON text that comes from a client (request bodies, NDJSON lines) into a DOM,
// with a nesting limit. nlohmann::json::parse alone builds one heap node per '[' or '{'
// (about 80 bytes each), so a body of brackets costs ~80 times its size before it is
// rejected; ParseClientJson stops at the first bracket past the limit instead.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>

#include "common/result.h"

namespace xet {

// Deepest nesting of arrays and objects accepted. No request body of this server nests
// deeper than 3.
inline constexpr size_t kMaxClientJsonDepth = 32;

// The one JSON value in `text` (surrounding whitespace allowed). InvalidArgument, with a
// message saying why, when `text` is not exactly one JSON value or nests arrays and
// objects deeper than `max_depth` (a top-level scalar has depth 0, `[]` depth 1). Memory:
// the DOM of what was read; nothing is allocated for bytes past the failing one.
Result<nlohmann::json> ParseClientJson(std::string_view text,
                                       size_t max_depth = kMaxClientJsonDepth);

}  // namespace xet
