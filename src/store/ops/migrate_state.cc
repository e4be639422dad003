#include "store/ops/migrate_state.h"

#include <cstdint>
#include <nlohmann/json.hpp>

namespace xet {
namespace {

constexpr size_t kMaxStateBytes = 64 << 10;

Status NotAState(const std::string& why) {
  return Status::InvalidArgument("not a migrate state file: " + why);
}

Result<int64_t> Counter(const nlohmann::json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end()) return NotAState(std::string("no \"") + name + "\"");
  if (it->is_number_unsigned()) {
    const uint64_t v = it->get<uint64_t>();
    if (v > static_cast<uint64_t>(INT64_MAX)) return NotAState(std::string(name) + " too large");
    return static_cast<int64_t>(v);
  }
  if (it->is_number_integer() && it->get<int64_t>() >= 0) return it->get<int64_t>();
  return NotAState(std::string(name) + " is not a non-negative integer");
}

Result<std::string> Text(const nlohmann::json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end() || !it->is_string()) {
    return NotAState(std::string("\"") + name + "\" is not a string");
  }
  return it->get<std::string>();
}

}  // namespace

Result<MigrateState> ParseMigrateState(std::string_view text) {
  if (text.size() > kMaxStateBytes) return NotAState("over 64 KiB");
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return NotAState("not JSON");
  if (!j.is_object()) return NotAState("not a JSON object");
  MigrateState s;
  XET_ASSIGN_OR_RETURN(s.from, Text(j, "from"));
  XET_ASSIGN_OR_RETURN(s.to, Text(j, "to"));
  XET_ASSIGN_OR_RETURN(s.checkpoint.xorbs_after, Counter(j, "xorbs_after"));
  XET_ASSIGN_OR_RETURN(s.checkpoint.files_after, Counter(j, "files_after"));
  return s;
}

std::string FormatMigrateState(const MigrateState& state) {
  const nlohmann::json j = {{"from", state.from},
                            {"to", state.to},
                            {"xorbs_after", state.checkpoint.xorbs_after},
                            {"files_after", state.checkpoint.files_after}};
  // Replace invalid UTF-8 rather than throw (a path is bytes).
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace xet
