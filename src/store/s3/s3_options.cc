#include "store/s3/s3_options.h"

#include <initializer_list>

#include "store/object_store.h"

namespace xet {
namespace {

bool ValidBucketName(std::string_view b) {
  if (b.size() < 3 || b.size() > 63) return false;
  for (char c : b) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-')) return false;
  }
  return b.front() != '.' && b.front() != '-' && b.back() != '.' && b.back() != '-';
}

// scheme://host[:port], nothing after.
bool ValidEndpoint(std::string_view e) {
  size_t rest = 0;
  if (e.starts_with("http://")) {
    rest = 7;
  } else if (e.starts_with("https://")) {
    rest = 8;
  } else {
    return false;
  }
  const std::string_view host = e.substr(rest);
  if (host.empty()) return false;
  for (char c : host) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == ':' || c == '[' || c == ']';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

Status ParseS3Url(std::string_view url, S3Options* options) {
  constexpr std::string_view kScheme = "s3://";
  if (!url.starts_with(kScheme)) {
    return Status::InvalidArgument("object store URL '" + std::string(url) +
                                   "' is not of the form s3://BUCKET[/PREFIX]");
  }
  std::string_view rest = url.substr(kScheme.size());
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  const size_t slash = rest.find('/');
  const std::string_view bucket = rest.substr(0, slash);
  const std::string_view prefix =
      slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
  if (!ValidBucketName(bucket)) {
    return Status::InvalidArgument("'" + std::string(bucket) +
                                   "' is not an S3 bucket name (3-63 of a-z 0-9 . -)");
  }
  if (!prefix.empty()) {
    if (Status st = ValidateObjectKey(prefix); !st.ok()) {
      return Status::InvalidArgument("S3 prefix '" + std::string(prefix) +
                                     "' may hold only segments of a-z 0-9 _ . - separated by /");
    }
  }
  options->bucket = std::string(bucket);
  options->prefix = std::string(prefix);
  return Status::Ok();
}

Status ApplyAwsEnvironment(
    const std::function<std::optional<std::string>(const char* name)>& getenv, S3Options* options) {
  const auto first = [&](std::initializer_list<const char*> names) -> std::optional<std::string> {
    for (const char* n : names) {
      if (auto v = getenv(n); v && !v->empty()) return v;
    }
    return std::nullopt;
  };
  if (options->endpoint.empty()) {
    if (auto e = first({"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"})) {
      options->endpoint = *e;
      options->path_style = true;
    }
  }
  if (auto r = first({"AWS_REGION", "AWS_DEFAULT_REGION"})) options->region = *r;
  while (!options->endpoint.empty() && options->endpoint.back() == '/') {
    options->endpoint.pop_back();
  }
  if (options->endpoint.empty()) {
    options->endpoint = "https://s3." + options->region + ".amazonaws.com";
    options->path_style = false;
  }
  if (!ValidEndpoint(options->endpoint)) {
    return Status::InvalidArgument("S3 endpoint '" + options->endpoint +
                                   "' is not of the form http[s]://HOST[:PORT]");
  }
  if (options->access_key.empty()) options->access_key = first({"AWS_ACCESS_KEY_ID"}).value_or("");
  if (options->secret_key.empty()) {
    options->secret_key = first({"AWS_SECRET_ACCESS_KEY"}).value_or("");
  }
  if (options->session_token.empty()) {
    options->session_token = first({"AWS_SESSION_TOKEN"}).value_or("");
  }
  if (options->access_key.empty() || options->secret_key.empty()) {
    return Status::InvalidArgument(
        "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY");
  }
  return Status::Ok();
}

}  // namespace xet
