// The XML answers of the S3 API that S3ObjectStore reads, parsed with expat.
//
// Every parser is bounded: documents over kMaxS3XmlBytes, nesting deeper than 16 elements,
// element text over 64 KiB and any DTD (entity tricks) are refused with Corruption, as is
// malformed XML. Element names are matched without their namespace. Unknown elements are
// ignored, so answers of newer servers still parse.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace xet {

inline constexpr size_t kMaxS3XmlBytes = 8u << 20;

// <Error><Code>…</Code><Message>…</Message></Error>
struct S3Error {
  std::string code;  // "NoSuchKey", "SlowDown", …; empty when the document has none
  std::string message;
};
Result<S3Error> ParseS3Error(std::string_view xml);

// One page of ListObjectsV2 (<ListBucketResult>).
struct S3ListPage {
  struct Object {
    std::string key;
    uint64_t size = 0;
  };
  std::vector<Object> objects;
  bool truncated = false;
  std::string next_token;  // NextContinuationToken; required when truncated
};
// Corruption also for a <Contents> without a key or with a size that is not a number, and
// for a truncated page without a continuation token.
Result<S3ListPage> ParseListObjectsV2(std::string_view xml);

// The UploadId of <InitiateMultipartUploadResult>; Corruption when missing.
Result<std::string> ParseInitiateMultipartUpload(std::string_view xml);

// CompleteMultipartUpload may fail after its 200 status line: the body is then an <Error>.
// OK for a <CompleteMultipartUploadResult>; the error (code and message) otherwise.
Result<S3Error> ParseCompleteMultipartUpload(std::string_view xml, bool* completed);

}  // namespace xet
