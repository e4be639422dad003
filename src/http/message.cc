#include "http/message.h"

#include <nlohmann/json.hpp>

#include "common/ascii.h"
#include "http/url.h"

namespace xet {
namespace {}  // namespace

void HttpHeaders::Set(std::string_view name, std::string value) {
  std::erase_if(fields_,
                [&](const auto& field) { return EqualsIgnoreAsciiCase(field.first, name); });
  fields_.emplace_back(std::string(name), std::move(value));
}

std::optional<std::string_view> HttpHeaders::Get(std::string_view name) const {
  for (const auto& [field_name, value] : fields_) {
    if (EqualsIgnoreAsciiCase(field_name, name)) return std::string_view(value);
  }
  return std::nullopt;
}

bool HttpHeaders::Remove(std::string_view name) {
  return std::erase_if(fields_, [&](const auto& field) {
           return EqualsIgnoreAsciiCase(field.first, name);
         }) > 0;
}

std::optional<std::string> HttpRequest::QueryParam(std::string_view name) const {
  std::string_view rest = query;
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::optional<std::string> key = PercentDecode(pair.substr(0, eq), /*plus_as_space=*/true);
    if (!key || *key != name) continue;
    if (eq == std::string_view::npos) return std::string();
    std::optional<std::string> value = PercentDecode(pair.substr(eq + 1), /*plus_as_space=*/true);
    if (value) return value;
  }
  return std::nullopt;
}

uint64_t RangeBody::size() const {
  uint64_t total = 0;
  for (const Piece& piece : pieces) total += piece.text.size() + piece.length;
  return total;
}

HttpResponse HttpResponse::Error(int status, std::string_view message) {
  nlohmann::json body = {{"error", std::string(message)}};
  // Replace invalid UTF-8 rather than throw: messages may quote client input.
  return Json(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), status);
}

HttpResponse HttpResponse::Json(std::string json_text, int status) {
  HttpResponse response;
  response.status = status;
  response.headers.Add("Content-Type", "application/json");
  response.body = std::move(json_text);
  return response;
}

}  // namespace xet
