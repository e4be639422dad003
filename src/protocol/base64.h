// Standard base64 (RFC 4648 section 4, with '=' padding), as the POSIX metadata's extended
// attribute values travel in JSON. Shared by the client and the server.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace xet {

std::string Base64Encode(std::string_view bytes);
// nullopt unless `text` is canonical padded base64: a multiple of 4 characters of
// [A-Za-z0-9+/], with 0..2 '=' only at the end. No whitespace.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace xet
