#include "client/hub/remote_path.h"

#include <algorithm>

#include "common/ascii.h"
#include "protocol/bucket_path.h"

namespace xet {
namespace {

constexpr std::string_view kScheme = "hf://";
constexpr std::string_view kBuckets = "buckets/";

// Quotes `arg` for an error message: at most 200 bytes, control bytes shown as '?', so a
// hostile argument cannot forge lines of output.
std::string Quoted(std::string_view arg) {
  const size_t n = std::min<size_t>(arg.size(), 200);
  return "'" + WithoutControlChars(arg.substr(0, n)) + (arg.size() > n ? "...'" : "'");
}

// A rule violation, as one printable line: the rule checkers quote names as given, which
// may hold control characters.
Status Invalid(std::string_view arg, const Status& rule) {
  return Status::InvalidArgument(Quoted(arg) + ": " + WithoutControlChars(rule.message()));
}

}  // namespace

std::string RemotePath::ToString() const {
  std::string out = std::string(kScheme) + std::string(kBuckets) + ns + "/" + bucket;
  if (!path.empty()) out += "/" + path;
  if (trailing_slash) out += "/";
  return out;
}

bool IsRemotePath(std::string_view arg) { return arg.starts_with(kScheme); }

Result<RemotePath> ParseRemotePath(std::string_view arg) {
  if (!IsRemotePath(arg)) {
    return Status::InvalidArgument(Quoted(arg) + " is not a remote path (hf://buckets/NS/BUCKET)");
  }
  std::string_view rest = arg.substr(kScheme.size());
  if (!rest.starts_with(kBuckets)) {
    return Status::InvalidArgument(Quoted(arg) +
                                   ": only bucket paths are supported (hf://buckets/NS/BUCKET)");
  }
  rest.remove_prefix(kBuckets.size());

  RemotePath out;
  const size_t ns_end = rest.find('/');
  if (ns_end == std::string_view::npos) {
    return Status::InvalidArgument(Quoted(arg) +
                                   ": a bucket is named NAMESPACE/BUCKET (hf://buckets/NS/BUCKET)");
  }
  out.ns = std::string(rest.substr(0, ns_end));
  rest.remove_prefix(ns_end + 1);
  const size_t bucket_end = rest.find('/');
  out.bucket = std::string(rest.substr(0, bucket_end));
  if (Status st = ValidateBucketName(out.ns, "namespace"); !st.ok()) {
    return Invalid(arg, st);
  }
  if (Status st = ValidateBucketName(out.bucket, "bucket name"); !st.ok()) {
    return Invalid(arg, st);
  }
  if (bucket_end == std::string_view::npos) return out;  // hf://buckets/NS/BUCKET

  // After "BUCKET/": nothing (the root, as a directory) or PATH with at most one trailing '/'.
  std::string_view path = rest.substr(bucket_end + 1);
  out.trailing_slash = true;
  if (path.empty()) return out;
  if (path.back() == '/') {
    path.remove_suffix(1);
  } else {
    out.trailing_slash = false;
  }
  if (Status st = ValidateBucketPath(path); !st.ok()) return Invalid(arg, st);
  out.path = std::string(path);
  return out;
}

}  // namespace xet
