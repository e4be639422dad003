// The naming rules of buckets and their entries. Every route validates names and paths
// with these functions before they reach the Index; a violation is InvalidArgument with a
// one-line message saying which rule was broken (the routes answer 400).
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace xet {

// Longest entry path accepted, in bytes (S3's key limit).
inline constexpr size_t kMaxBucketPathBytes = 1024;
// Longest namespace or bucket name.
inline constexpr size_t kMaxBucketNameBytes = 96;

// A namespace or bucket name: 1..96 characters of [A-Za-z0-9._-], not starting or ending
// with '.' or '-', without "..". (The Hub's repository-name rules.)
Status ValidateBucketName(std::string_view name, std::string_view what = "bucket name");

// An entry path: 1..1024 bytes of valid UTF-8; no leading or trailing '/', no empty
// segment ("//"), no "." or ".." segment, no '\\', no NUL or other control character.
Status ValidateBucketPath(std::string_view path);

// A listing prefix: "" (the root) or a path as above; one trailing '/' is allowed and
// ignored ("/" is the root). Returns the prefix without it.
Result<std::string> NormalizeBucketPrefix(std::string_view prefix);

// A bucket's full name "NAMESPACE/BUCKET": splits it at the first '/' and validates both
// parts with ValidateBucketName. InvalidArgument otherwise.
Status ValidateBucketFullName(std::string_view full_name);

}  // namespace xet
