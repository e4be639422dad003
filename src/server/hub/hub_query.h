// Query-string values of the bucket API: page sizes and booleans, with 400-worthy errors.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "common/result.h"

namespace xet {

// ?limit=N: `def` when absent; N in 1..; values above `max` are lowered to it.
// InvalidArgument for anything but decimal digits, or 0.
Result<size_t> ParsePageLimit(const std::optional<std::string>& value, size_t def, size_t max);

// ?flag=true|false (also 1/0, True/False; "" = true, as in "?recursive"); `def` when absent.
Result<bool> ParseBoolParam(const std::optional<std::string>& value, const char* name, bool def);

}  // namespace xet
