#include "server/hub/hub_query.h"

namespace xet {

Result<size_t> ParsePageLimit(const std::optional<std::string>& value, size_t def, size_t max) {
  if (!value) return def;
  if (value->empty() || value->size() > 12 ||
      value->find_first_not_of("0123456789") != std::string::npos) {
    return Status::InvalidArgument("limit must be a positive integer");
  }
  const size_t n = std::stoull(*value);
  if (n == 0) return Status::InvalidArgument("limit must be a positive integer");
  return n > max ? max : n;
}

Result<bool> ParseBoolParam(const std::optional<std::string>& value, const char* name, bool def) {
  if (!value) return def;
  const std::string& v = *value;
  if (v.empty() || v == "true" || v == "True" || v == "1") return true;
  if (v == "false" || v == "False" || v == "0") return false;
  return Status::InvalidArgument(std::string(name) + " must be true or false");
}

}  // namespace xet
