#include "api/bucket_json.h"

#include <chrono>
#include <cstdio>

namespace xet {

std::string FormatIsoMillis(int64_t unix_ms) {
  using namespace std::chrono;
  if (unix_ms < 0) unix_ms = 0;
  const sys_time<milliseconds> t{milliseconds(unix_ms)};
  const sys_days day = floor<days>(t);
  const year_month_day ymd(day);
  const hh_mm_ss<milliseconds> tod(t - day);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ",
                static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                static_cast<unsigned>(ymd.day()), static_cast<int>(tod.hours().count()),
                static_cast<int>(tod.minutes().count()), static_cast<int>(tod.seconds().count()),
                static_cast<int>(tod.subseconds().count()));
  return buf;
}

nlohmann::json BucketInfoJson(const BucketRecord& bucket) {
  return {{"id", bucket.FullName()},
          {"private", bucket.is_private},
          {"createdAt", FormatIsoMillis(bucket.created_at_ms)},
          {"updatedAt", FormatIsoMillis(bucket.updated_at_ms)},
          {"size", bucket.total_size},
          {"totalFiles", bucket.total_files}};
}

nlohmann::json BucketCreatedJson(std::string_view url, std::string_view full_name) {
  return {{"url", url}, {"id", full_name}, {"name", full_name}};
}

nlohmann::json BucketFileJson(const BucketEntry& entry) {
  nlohmann::json j = {
      {"type", "file"},
      {"path", entry.path},
      {"size", entry.size},
      {"xetHash", entry.file_hash.ToHex()},
      {"mtime", FormatIsoMillis(entry.mtime_ms != 0 ? entry.mtime_ms : entry.uploaded_at_ms)},
      {"uploadedAt", FormatIsoMillis(entry.uploaded_at_ms)},
  };
  if (!entry.content_type.empty()) j["contentType"] = entry.content_type;
  return j;
}

nlohmann::json BucketTreeItemJson(const BucketTreeItem& item) {
  if (item.is_directory) return {{"type", "directory"}, {"path", item.path}};
  return BucketFileJson(item.entry);
}

std::string BatchAnswerJson(uint64_t processed, uint64_t succeeded,
                            const std::vector<BatchFailure>& failed) {
  nlohmann::json list = nlohmann::json::array();
  for (const BatchFailure& f : failed) list.push_back({{"path", f.path}, {"error", f.error}});
  return DumpJson({{"success", failed.empty()},
                   {"processed", processed},
                   {"succeeded", succeeded},
                   {"failed", std::move(list)}});
}

std::string XetTokenJson(std::string_view token, std::string_view cas_url, int64_t exp) {
  return DumpJson({{"accessToken", token}, {"casUrl", cas_url}, {"exp", exp}});
}

std::string XetFileInfoJson(const BucketEntry& entry, std::string_view refresh_url,
                            std::string_view reconstruction_url) {
  const std::string hash = entry.file_hash.ToHex();
  return DumpJson({{"hash", hash},
                   {"size", entry.size},
                   {"etag", "\"" + hash + "\""},
                   {"refreshUrl", refresh_url},
                   {"reconstructionUrl", reconstruction_url}});
}

std::string DumpJson(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace xet
