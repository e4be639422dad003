// Response body compression negotiated from Accept-Encoding (gzip via zlib, zstd via
// libzstd).
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace xet {

enum class ContentEncoding { kIdentity, kGzip, kZstd };

// The Content-Encoding token: "identity", "gzip" or "zstd".
std::string_view ContentEncodingName(ContentEncoding encoding);

// The best encoding the client accepts per its Accept-Encoding value: zstd, then gzip,
// else identity. Honours q-values ("gzip;q=0" refuses gzip) and "*".
ContentEncoding ChooseContentEncoding(std::string_view accept_encoding);

// A complete gzip member (RFC 1952) holding `data`.
Result<std::string> GzipCompress(std::string_view data, int level = 5);
// A single zstd frame holding `data` (content size recorded in the header).
Result<std::string> ZstdCompress(std::string_view data, int level = 3);

}  // namespace xet
