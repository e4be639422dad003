// ASCII helpers shared by the protocol code (HTTP header names, auth schemes, encodings).
#pragma once

#include <strings.h>

#include <string_view>

namespace xet {

// True when a and b are equal ignoring ASCII letter case.
inline bool EqualsIgnoreAsciiCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && ::strncasecmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace xet
