#include "server/hub/bucket_json.h"

#include <chrono>

#include "protocol/posix_metadata.h"

namespace xet {

std::string FormatIsoMillis(int64_t unix_ms) {
  using namespace std::chrono;
  if (unix_ms < 0) unix_ms = 0;
  const sys_time<milliseconds> t{milliseconds(unix_ms)};
  const sys_days day = floor<days>(t);
  const year_month_day ymd(day);
  const hh_mm_ss<milliseconds> tod(t - day);
  // Written digit by digit: listings format two times per entry.
  std::string out = "0000-00-00T00:00:00.000Z";
  auto put = [&out](size_t at, size_t width, int64_t v) {
    for (size_t i = 0; i < width; ++i, v /= 10)
      out[at + width - 1 - i] = static_cast<char>('0' + v % 10);
  };
  put(0, 4, static_cast<int>(ymd.year()));
  put(5, 2, static_cast<unsigned>(ymd.month()));
  put(8, 2, static_cast<unsigned>(ymd.day()));
  put(11, 2, tod.hours().count());
  put(14, 2, tod.minutes().count());
  put(17, 2, tod.seconds().count());
  put(20, 3, tod.subseconds().count());
  return out;
}

nlohmann::json BucketInfoJson(const BucketRecord& bucket) {
  return {{"id", bucket.FullName()},
          {"private", bucket.is_private},
          {"createdAt", FormatIsoMillis(bucket.created_at_ms)},
          {"updatedAt", FormatIsoMillis(bucket.updated_at_ms)},
          {"size", bucket.total_size},
          {"totalFiles", bucket.total_files}};
}

nlohmann::json BucketDetailJson(const BucketRecord& bucket) {
  nlohmann::json j = BucketInfoJson(bucket);
  j["generation"] = bucket.generation;
  return j;
}

nlohmann::json BucketCreatedJson(std::string_view url, std::string_view full_name) {
  return {{"url", url}, {"id", full_name}, {"name", full_name}};
}

namespace {

// Appends `text` as a JSON string literal. Valid UTF-8 passes through; quotes, backslashes
// and control characters are escaped; invalid UTF-8 cannot reach here (paths are validated
// before they are stored, content types are printable ASCII).
void AppendJsonString(std::string_view text, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (b < 0x20) {
      out->append("\\u00");
      out->push_back(kHex[b >> 4]);
      out->push_back(kHex[b & 0xF]);
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

// ,"posix":{...} when the entry has POSIX metadata (xetstore extension).
void AppendPosix(const BucketEntry& e, std::string* out) {
  if (!e.posix) return;
  out->append(R"(,"posix":)");
  out->append(EncodePosixJson(*e.posix));
}

void AppendFile(const BucketEntry& e, std::string* out) {
  out->append(R"({"type":"file","path":)");
  AppendJsonString(e.path, out);
  out->append(R"(,"size":)");
  out->append(std::to_string(e.size));
  out->append(R"(,"xetHash":")");
  char hex[64];
  e.file_hash.ToHex(hex);
  out->append(hex, sizeof hex);
  out->append(R"(","mtime":")");
  out->append(FormatIsoMillis(e.mtime_ms != 0 ? e.mtime_ms : e.uploaded_at_ms));
  out->append(R"(","uploadedAt":")");
  out->append(FormatIsoMillis(e.uploaded_at_ms));
  out->push_back('"');
  if (!e.content_type.empty()) {
    out->append(R"(,"contentType":)");
    AppendJsonString(e.content_type, out);
  }
  AppendPosix(e, out);
  out->push_back('}');
}

// A directory: {"type": "directory", "path"}, and for an explicit directory entry its
// "mtime" (as a file's) and "posix".
void AppendDirectory(std::string_view path, const BucketEntry* e, std::string* out) {
  out->append(R"({"type":"directory","path":)");
  AppendJsonString(path, out);
  if (e != nullptr) {
    out->append(R"(,"mtime":")");
    out->append(FormatIsoMillis(e->mtime_ms != 0 ? e->mtime_ms : e->uploaded_at_ms));
    out->push_back('"');
    AppendPosix(*e, out);
  }
  out->push_back('}');
}

// Room for one file item with a short path: the string grows rarely.
constexpr size_t kItemBytes = 256;

}  // namespace

std::string BucketFilesJson(std::span<const BucketEntry> entries) {
  std::string out;
  out.reserve(2 + entries.size() * kItemBytes);
  out.push_back('[');
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i) out.push_back(',');
    if (entries[i].is_directory) {
      AppendDirectory(entries[i].path, &entries[i], &out);
    } else {
      AppendFile(entries[i], &out);
    }
  }
  out.push_back(']');
  return out;
}

std::string BucketTreePageJson(std::span<const BucketTreeItem> items) {
  std::string out;
  out.reserve(2 + items.size() * kItemBytes);
  out.push_back('[');
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out.push_back(',');
    if (items[i].is_directory) {
      AppendDirectory(items[i].path, items[i].entry.is_directory ? &items[i].entry : nullptr, &out);
    } else {
      AppendFile(items[i].entry, &out);
    }
  }
  out.push_back(']');
  return out;
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
