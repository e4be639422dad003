#include "client/transport/json_fields.h"

namespace xet::wire_json {

using nlohmann::json;

// A field check failed: names the document and the field.
Status Bad(std::string_view doc, std::string_view what) {
  return Status::Corruption(std::string(doc) + " answer: " + std::string(what));
}

Result<json> ParseBody(std::string_view body, std::string_view doc) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Bad(doc, "not valid JSON");
  return j;
}

const json* Field(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  const auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

std::optional<uint64_t> U64(const json& obj, const char* key) {
  const json* f = Field(obj, key);
  if (f == nullptr || !f->is_number_unsigned()) return std::nullopt;
  return f->get<uint64_t>();
}

std::optional<std::string> Str(const json& obj, const char* key) {
  const json* f = Field(obj, key);
  if (f == nullptr || !f->is_string()) return std::nullopt;
  return f->get<std::string>();
}

bool GetU64(const json& obj, const char* key, uint64_t* out) {
  const json* f = Field(obj, key);
  if (f == nullptr || !f->is_number_unsigned()) return false;
  *out = f->get<uint64_t>();
  return true;
}

bool GetU32(const json& obj, const char* key, uint32_t* out) {
  uint64_t v = 0;
  if (!GetU64(obj, key, &v) || v > UINT32_MAX) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

}  // namespace xet::wire_json
