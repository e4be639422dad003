// Field access for the JSON answers the client parses (client/hub/wire.h,
// client/cas/reconstruction_json.h): every accessor checks the type it reads, so a parser
// built from them never throws on a wrong shape.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace xet::wire_json {

// Corruption "<doc> answer: <what>": a field check failed.
Status Bad(std::string_view doc, std::string_view what);
// `body` as JSON; Bad(doc, "not valid JSON") when it is not.
Result<nlohmann::json> ParseBody(std::string_view body, std::string_view doc);
// obj[key] when `obj` is an object that has a non-null `key`, else nullptr.
const nlohmann::json* Field(const nlohmann::json& obj, const char* key);
// obj[key] when it is an unsigned number / a string.
std::optional<uint64_t> U64(const nlohmann::json& obj, const char* key);
std::optional<std::string> Str(const nlohmann::json& obj, const char* key);
// Stores obj[key] in *out and returns true when it is an unsigned number (that fits).
bool GetU64(const nlohmann::json& obj, const char* key, uint64_t* out);
bool GetU32(const nlohmann::json& obj, const char* key, uint32_t* out);

}  // namespace xet::wire_json
