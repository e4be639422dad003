// The JSON request bodies of the bucket and CAS routes, parsed and validated. Pure: no
// I/O; every error is InvalidArgument with a one-line message (the routes answer 400).
// JSON is read with ParseClientJson (server/json_parse.h), so nesting is bounded.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "format/hash.h"

namespace xet {

// POST /api/buckets/{ns}/{name}: empty (only whitespace) or a JSON object with optional
// "private" (bool), "visibility" ("private" | "public"), "resourceGroupId" and "region"
// (strings); null counts as absent, other fields are ignored. Returns whether the bucket
// is private (true when neither field says otherwise). "private" and "visibility" must
// agree when both are given.
Result<bool> ParseBucketCreateBody(std::string_view body);

// POST /api/repos/move: {"fromRepo": "NS/NAME", "toRepo": "NS/NAME", "type": "bucket"}.
// Both ids pass ValidateBucketFullName (protocol/bucket_path.h).
struct BucketMoveBody {
  std::string from_ns, from_name;
  std::string to_ns, to_name;
  std::string FromId() const { return from_ns + "/" + from_name; }
  std::string ToId() const { return to_ns + "/" + to_name; }
};
Result<BucketMoveBody> ParseBucketMoveBody(std::string_view body);

// POST /api/buckets/{ns}/{name}/paths-info: {"paths": ["...", ...]} with at most
// `max_paths` entries, each a string passing ValidateBucketPath. Returns the paths in
// order, duplicates dropped.
Result<std::vector<std::string>> ParsePathsInfoBody(std::string_view body, size_t max_paths);

// POST /v1/reconstructions: a JSON array of at most `max_files` keys {"prefix"?: "default",
// "hash": "<xet hex>"}. Returns the file hashes in order, duplicates dropped.
Result<std::vector<Hash>> ParseBatchReconstructionBody(std::string_view body, size_t max_files);

}  // namespace xet
