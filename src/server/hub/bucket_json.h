// The JSON documents of the Hub-compatible bucket API (field names as the @huggingface/hub
// and huggingface_hub clients read them). Times are ISO-8601 UTC with milliseconds.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "store/bucket_records.h"

namespace xet {

// "2024-05-06T07:08:09.012Z" for unix milliseconds (negative values clamp to the epoch).
std::string FormatIsoMillis(int64_t unix_ms);

// {"id", "private", "createdAt", "updatedAt", "size", "totalFiles"}
nlohmann::json BucketInfoJson(const BucketRecord& bucket);
// BucketInfoJson and the xetstore extension "generation" (GET of one bucket).
nlohmann::json BucketDetailJson(const BucketRecord& bucket);

// {"url", "id", "name"}: the answer to a create.
nlohmann::json BucketCreatedJson(std::string_view url, std::string_view full_name);

// Listings are written by hand into one reserved string (a page holds up to 10,000 items;
// a JSON DOM per item costs more than the rest of the request).
//
// A JSON array of files {"type": "file", "path", "size", "xetHash", "mtime", "uploadedAt",
// "contentType"?, "posix"?} and explicit directory entries {"type": "directory", "path",
// "mtime", "posix"?}. An entry without a client mtime reports its upload time (as S3's
// LastModified does). "posix" (protocol/posix_metadata.h) is a xetstore extension.
std::string BucketFilesJson(std::span<const BucketEntry> entries);

// A JSON array of listing items: files as above and directories {"type": "directory",
// "path"} (with "mtime" and "posix"? when the directory has an explicit entry).
std::string BucketTreePageJson(std::span<const BucketTreeItem> items);

// One failed operation of a batch, for the answer's "failed" list.
struct BatchFailure {
  std::string path;
  std::string error;
};

// {"success", "processed", "succeeded", "failed": [{"path", "error"}]}
std::string BatchAnswerJson(uint64_t processed, uint64_t succeeded,
                            const std::vector<BatchFailure>& failed);

// {"accessToken", "casUrl", "exp"} (exp in unix seconds)
std::string XetTokenJson(std::string_view token, std::string_view cas_url, int64_t exp);

// The resolve answer for Accept: application/vnd.xet-fileinfo+json:
// {"hash", "size", "etag", "refreshUrl", "reconstructionUrl"}
std::string XetFileInfoJson(const BucketEntry& entry, std::string_view refresh_url,
                            std::string_view reconstruction_url);

// Serializes with invalid UTF-8 replaced (strings may quote client input).
std::string DumpJson(const nlohmann::json& j);

}  // namespace xet
