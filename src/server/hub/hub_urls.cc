#include "server/hub/hub_urls.h"

namespace xet {
namespace {

std::string Join(std::string_view public_url, std::string_view path) {
  std::string out(public_url);
  while (!out.empty() && out.back() == '/') out.pop_back();
  out += path;
  return out;
}

}  // namespace

// Bucket names are [A-Za-z0-9._-] (protocol/bucket_path.h): they need no encoding.
std::string BucketPageUrl(std::string_view public_url, std::string_view full_name) {
  return Join(public_url, "/buckets/" + std::string(full_name));
}

std::string BucketApiUrl(std::string_view public_url, std::string_view full_name) {
  return Join(public_url, "/api/buckets/" + std::string(full_name));
}

std::string XetReadTokenUrl(std::string_view public_url, std::string_view full_name) {
  return BucketApiUrl(public_url, full_name) + "/xet-read-token";
}

std::string ReconstructionInfoUrl(std::string_view public_url, const Hash& file_hash) {
  return Join(public_url, "/v1/reconstructions/" + file_hash.ToHex());
}

std::string NextPageLink(std::string_view url) {
  return "<" + std::string(url) + ">; rel=\"next\"";
}

}  // namespace xet
