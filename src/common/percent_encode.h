// Percent-encoding (RFC 3986) for URLs that server and client build.
#pragma once

#include <string>
#include <string_view>

namespace xet {

// Percent-encodes every byte outside RFC 3986's unreserved set (A-Z a-z 0-9 - . _ ~) as
// %XX (upper-case hex); with `keep_slash`, '/' is kept too (a path of several segments).
std::string PercentEncode(std::string_view text, bool keep_slash = false);

}  // namespace xet
