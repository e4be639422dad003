// The JSON documents of the Hub bucket API as the client reads and writes them (HubClient
// uses these; they are separate so the parsing of untrusted answers can be tested on its
// own; the CAS API's are in client/cas/reconstruction_json.h). Every parser takes the raw body and
// never throws: a body that is not the expected document is Corruption with a message naming the
// field.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "client/hub/hub_client.h"
#include "common/result.h"

namespace xet {

// "2024-05-06T07:08:09.012Z" (fraction optional, any number of digits, "Z" or "+00:00" /
// "-hh:mm" offsets) to unix milliseconds. InvalidArgument otherwise.
Result<int64_t> ParseIsoMillis(std::string_view text);

// The target of the rel="next" link of a Link header, if any (RFC 8288; several links,
// quoted or bare rel values, rel lists like "next last").
std::optional<std::string> NextLinkUrl(std::string_view link_header);

// {"id", "private", "createdAt", "size", "totalFiles", "generation"? (xetstore)}
Result<RemoteBucket> ParseBucketJson(std::string_view body);
// [bucket, ...]
Result<std::vector<RemoteBucket>> ParseBucketListJson(std::string_view body);
// [{"type": "file"|"directory", "path", "size", "xetHash", "mtime", "uploadedAt",
//   "contentType", "posix"?}, ...]; mtime and uploadedAt ISO-8601 (mtime also unix ms as a
// number); directories may have "mtime" and "posix" too. "posix" (xetstore extension) must
// keep protocol/posix_metadata.h's rules and match the item's type (a directory's mode for
// a directory; a symbolic link is an empty file).
Result<std::vector<RemoteEntry>> ParseEntryListJson(std::string_view body);
// {"accessToken", "casUrl", "exp"}; casUrl without a trailing '/'.
Result<XetToken> ParseXetTokenJson(std::string_view body);
// {"success", "processed", "succeeded", "failed": [{"path", "error"}]}
Result<BatchOutcome> ParseBatchOutcomeJson(std::string_view body);
// The NDJSON body of a batch: one line per op, each ending in '\n'. An empty source_bucket
// of a copyFile names `bucket_id` itself. InvalidArgument when a string is not valid UTF-8,
// a posix breaks ValidatePosix, or a setMetadata has no posix.
Result<std::string> SerializeBatchOps(std::span<const RemoteOp> ops, const std::string& bucket_id);
}  // namespace xet
