#include "store/object_store.h"

namespace xet {

Result<bool> ObjectStore::PutParts(std::string_view key,
                                   std::span<const std::span<const uint8_t>> parts) {
  std::vector<uint8_t> joined;
  size_t total = 0;
  for (const auto& part : parts) total += part.size();
  joined.reserve(total);
  for (const auto& part : parts) joined.insert(joined.end(), part.begin(), part.end());
  return Put(key, joined);
}

Result<UniqueFd> ObjectStore::OpenFile(std::string_view key) {
  XET_RETURN_IF_ERROR(ValidateObjectKey(key));
  return Status::Unimplemented("this object store keeps no local files");
}

}  // namespace xet
