// The packed blob encodings the index backends store records in (sqlite_schema.h,
// postgres_schema.h):
// fixed-size little-endian records, so a file of 100,000 terms is one row and decodes with
// one bounds check and one memcpy. Blobs read back are untrusted: a length that is not a
// whole number of records is Corruption.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/index_records.h"

namespace xet {

inline constexpr size_t kChunkRowBlobSize = 32 + 4 + 4;  // hash, compressed_end, uncompressed_end
inline constexpr size_t kFileTermBlobSize = 32 + 4 + 4 + 4;  // xorb hash, start, end, bytes

std::vector<uint8_t> EncodeChunkRows(std::span<const XorbChunkRow> rows);
Result<std::vector<XorbChunkRow>> DecodeChunkRows(std::span<const uint8_t> blob);

std::vector<uint8_t> EncodeFileTerms(std::span<const FileTerm> terms);
Result<std::vector<FileTerm>> DecodeFileTerms(std::span<const uint8_t> blob);

// A token's scopes as '\n'-separated text. Scopes must be non-empty and free of '\n'
// (InvalidArgument otherwise).
Result<std::string> EncodeScopeList(std::span<const Scope> scopes);
std::vector<Scope> DecodeScopeList(std::string_view text);

// `scopes` as a JSON array of strings (the form SQLite's json_each() reads).
std::string ScopesAsJson(std::span<const Scope> scopes);

}  // namespace xet
