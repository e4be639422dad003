#include "server/request_bodies.h"

#include <algorithm>
#include <optional>
#include <set>

#include "protocol/bucket_path.h"
#include "server/json_parse.h"

namespace xet {
namespace {

using nlohmann::json;

// The body as a JSON object, or InvalidArgument with `expected` as the message.
Result<json> ParseObject(std::string_view body, const std::string& expected) {
  auto j = ParseClientJson(body);
  if (!j.ok() || !j->is_object()) return Status::InvalidArgument(expected);
  return std::move(*j);
}

}  // namespace

Result<bool> ParseBucketCreateBody(std::string_view body) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return true;
  XET_ASSIGN_OR_RETURN(const json j, ParseObject(body, "body must be a JSON object"));
  std::optional<bool> is_private;
  if (auto it = j.find("private"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean()) return Status::InvalidArgument("\"private\" must be true or false");
    is_private = it->get<bool>();
  }
  if (auto it = j.find("visibility"); it != j.end() && !it->is_null()) {
    if (!it->is_string() || (*it != "private" && *it != "public")) {
      return Status::InvalidArgument("\"visibility\" must be \"private\" or \"public\"");
    }
    const bool v = *it == "private";
    if (is_private && *is_private != v) {
      return Status::InvalidArgument("\"private\" and \"visibility\" disagree");
    }
    is_private = v;
  }
  for (const char* field : {"resourceGroupId", "region"}) {
    if (auto it = j.find(field); it != j.end() && !it->is_null() && !it->is_string()) {
      return Status::InvalidArgument(std::string("\"") + field + "\" must be a string");
    }
  }
  return is_private.value_or(true);  // S3-like: private unless asked otherwise
}

Result<BucketMoveBody> ParseBucketMoveBody(std::string_view body) {
  XET_ASSIGN_OR_RETURN(const json j, ParseObject(body, "body must be a JSON object"));
  std::string ids[2];
  const char* fields[2] = {"fromRepo", "toRepo"};
  for (int i = 0; i < 2; ++i) {
    const auto it = j.find(fields[i]);
    if (it == j.end() || !it->is_string()) {
      return Status::InvalidArgument(std::string("\"") + fields[i] + "\" must be NAMESPACE/BUCKET");
    }
    ids[i] = it->get<std::string>();
    XET_RETURN_IF_ERROR(ValidateBucketFullName(ids[i]).WithContext(fields[i]));
  }
  const auto type = j.find("type");
  if (type == j.end() || *type != "bucket") {
    return Status::InvalidArgument("only buckets can be moved here: \"type\" must be \"bucket\"");
  }
  const size_t a = ids[0].find('/'), b = ids[1].find('/');
  return BucketMoveBody{ids[0].substr(0, a), ids[0].substr(a + 1), ids[1].substr(0, b),
                        ids[1].substr(b + 1)};
}

Result<std::vector<std::string>> ParsePathsInfoBody(std::string_view body, size_t max_paths) {
  const std::string expected = "body must be a JSON object {\"paths\": [\"...\", ...]}";
  XET_ASSIGN_OR_RETURN(const json j, ParseObject(body, expected));
  const auto list = j.find("paths");
  if (list == j.end() || !list->is_array()) return Status::InvalidArgument(expected);
  if (list->size() > max_paths) {
    return Status::InvalidArgument("at most " + std::to_string(max_paths) + " paths per request");
  }
  std::vector<std::string> paths;
  std::set<std::string, std::less<>> seen;
  paths.reserve(list->size());
  for (const json& p : *list) {
    if (!p.is_string()) return Status::InvalidArgument("\"paths\" must hold strings");
    std::string path = p.get<std::string>();
    if (Status st = ValidateBucketPath(path); !st.ok()) {
      return Status::InvalidArgument("invalid path '" + path + "': " + st.message());
    }
    if (seen.insert(path).second) paths.push_back(std::move(path));
  }
  return paths;
}

Result<std::vector<Hash>> ParseBatchReconstructionBody(std::string_view body, size_t max_files) {
  auto j = ParseClientJson(body);
  if (!j.ok() || !j->is_array()) {
    return Status::InvalidArgument("body must be a JSON array of {\"prefix\", \"hash\"}");
  }
  if (j->size() > max_files) {
    return Status::InvalidArgument("too many files in one batch (max " + std::to_string(max_files) +
                                   ")");
  }
  std::vector<Hash> hashes;
  std::set<Hash> seen;
  for (const json& key : *j) {
    if (!key.is_object() || !key.contains("hash") || !key["hash"].is_string() ||
        (key.contains("prefix") && key["prefix"] != "default")) {
      return Status::InvalidArgument("each key must be {\"prefix\": \"default\", \"hash\": ...}");
    }
    const std::string hex = key["hash"].get<std::string>();
    const auto h = Hash::FromHex(hex);
    if (!h) return Status::InvalidArgument("malformed file hash '" + hex + "'");
    if (seen.insert(*h).second) hashes.push_back(*h);
  }
  return hashes;
}

}  // namespace xet
