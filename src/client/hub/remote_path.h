// Remote locations in the Hub's URI form: hf://buckets/NAMESPACE/BUCKET[/PATH].
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace xet {

struct RemotePath {
  std::string ns;               // namespace
  std::string bucket;           // bucket name
  std::string path;             // path inside the bucket; "" = the bucket's root
  bool trailing_slash = false;  // the argument ended in '/' (a directory was meant)

  std::string BucketId() const { return ns + "/" + bucket; }  // "NAMESPACE/BUCKET"
  std::string ToString() const;                               // the hf:// form
};

// True when `arg` starts with "hf://" (so it must parse as a RemotePath).
bool IsRemotePath(std::string_view arg);

// Parses "hf://buckets/NS/BUCKET", "hf://buckets/NS/BUCKET/", "hf://buckets/NS/BUCKET/a/b".
// InvalidArgument (one line naming the rule) for other schemes, a missing namespace or
// bucket, an invalid name (protocol/bucket_path.h rules) or an invalid path.
Result<RemotePath> ParseRemotePath(std::string_view arg);

}  // namespace xet
