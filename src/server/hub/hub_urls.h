// The URLs the Hub-compatible bucket API hands out (Link headers, create answers, token
// answers), built from the server's public URL, and the percent-encoding they need.
#pragma once

#include <string>
#include <string_view>

#include "common/percent_encode.h"  // PercentEncode, used with these URLs
#include "format/hash.h"

namespace xet {

// <public>/buckets/NS/NAME — the bucket's page, as create answers name it.
std::string BucketPageUrl(std::string_view public_url, std::string_view full_name);
// <public>/api/buckets/NS/NAME
std::string BucketApiUrl(std::string_view public_url, std::string_view full_name);
// <public>/api/buckets/NS/NAME/xet-read-token — the resolve answer's rel="xet-auth".
std::string XetReadTokenUrl(std::string_view public_url, std::string_view full_name);
// <public>/v1/reconstructions/HASH — the resolve answer's rel="xet-reconstruction-info".
std::string ReconstructionInfoUrl(std::string_view public_url, const Hash& file_hash);

// A Link header value announcing the next page: `<url>; rel="next"`.
std::string NextPageLink(std::string_view url);

}  // namespace xet
