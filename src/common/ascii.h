// ASCII helpers shared by the protocol code (HTTP header names, auth schemes, encodings).
#pragma once

#include <strings.h>

#include <string>
#include <string_view>

namespace xet {

// True when a and b are equal ignoring ASCII letter case.
inline bool EqualsIgnoreAsciiCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && ::strncasecmp(a.data(), b.data(), a.size()) == 0;
}

// `s` with every ASCII control character (below 0x20, and 0x7F) replaced by '?': safe to
// print on a terminal line, so hostile names cannot forge or erase output.
inline std::string WithoutControlChars(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) c = '?';
  }
  return out;
}

}  // namespace xet
