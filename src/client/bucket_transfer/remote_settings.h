// Where one client reaches its server and keeps its local caches: the settings a
// RemoteConnection is opened with. The CLI resolves them from flags and environment
// (cli/remote_options.h); the mount and the S3 gateway fill them from their own
// configuration.
#pragma once

#include <string>

namespace xet {

struct RemoteSettings {
  std::string endpoint;         // server URL, without trailing '/'
  std::string token;            // user token (hf_...); "" = anonymous: public buckets only
  int retries = 5;              // retries of a failed request after the first attempt
  std::string cache_dir;        // the local cache's root (shards of uploads); "" = no cache
  std::string chunk_cache_dir;  // the download chunk cache; "" = none
};

}  // namespace xet
