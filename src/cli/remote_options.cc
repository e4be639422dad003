#include "cli/remote_options.h"

#include <cstdlib>

namespace xet::cli {
namespace {

// The first non-empty of: the flag's value, then each environment variable in order.
std::string FirstOf(const std::string& flag, std::initializer_list<const char*> env_names,
                    const EnvLookup& getenv) {
  if (!flag.empty()) return flag;
  for (const char* name : env_names) {
    const char* v = getenv(name);
    if (v != nullptr && *v != '\0') return v;
  }
  return {};
}

}  // namespace

void AddRemoteOptions(CLI::App* cmd, RemoteOptions* options) {
  const std::string group = "Connection";
  cmd->add_option("--endpoint", options->endpoint,
                  "Server URL (default: $XETSTORE_ENDPOINT, then $HF_ENDPOINT, then " +
                      std::string(kDefaultEndpoint) + ")")
      ->group(group);
  cmd->add_option("--token", options->token,
                  "User token, hf_... (default: $XETSTORE_TOKEN, then $HF_TOKEN; without one "
                  "only public buckets are readable)")
      ->group(group);
  cmd->add_option("--retries", options->retries,
                  "Retries of a failed request (exponential backoff with jitter) before giving "
                  "up")
      ->check(CLI::Range(0, 20))
      ->capture_default_str()
      ->group(group);
}

void AddCacheOptions(CLI::App* cmd, RemoteOptions* options) {
  const std::string group = "Cache";
  cmd->add_option("--cache-dir", options->cache_dir,
                  "Where to keep the shards of earlier uploads, so unchanged data is not sent "
                  "again (default: $XETSTORE_CACHE_DIR, then $XDG_CACHE_HOME/xetstore, then "
                  "~/.cache/xetstore; at most 64 MiB per bucket)")
      ->group(group);
  cmd->add_flag("--no-cache", options->no_cache,
                "Keep no local cache: deduplicate only against what the server reports")
      ->group(group);
  cmd->add_flag("--chunk-cache", options->chunk_cache,
                "Also keep downloaded chunks in the cache directory (up to 10 GiB, least "
                "recently used first out), so downloading them again reads them locally")
      ->group(group);
}

RemoteSettings ResolveRemote(const RemoteOptions& options, const EnvLookup& getenv) {
  RemoteSettings r;
  r.endpoint = FirstOf(options.endpoint, {"XETSTORE_ENDPOINT", "HF_ENDPOINT"}, getenv);
  if (r.endpoint.empty()) r.endpoint = kDefaultEndpoint;
  while (!r.endpoint.empty() && r.endpoint.back() == '/') r.endpoint.pop_back();
  r.token = FirstOf(options.token, {"XETSTORE_TOKEN", "HF_TOKEN"}, getenv);
  r.retries = options.retries;
  if (!options.no_cache) {
    r.cache_dir = FirstOf(options.cache_dir, {"XETSTORE_CACHE_DIR"}, getenv);
    if (r.cache_dir.empty()) {
      if (std::string xdg = FirstOf({}, {"XDG_CACHE_HOME"}, getenv); !xdg.empty()) {
        r.cache_dir = xdg + "/xetstore";
      } else if (std::string home = FirstOf({}, {"HOME"}, getenv); !home.empty()) {
        r.cache_dir = home + "/.cache/xetstore";
      }
    }
    if (options.chunk_cache && !r.cache_dir.empty()) r.chunk_cache_dir = r.cache_dir + "/chunks";
  }
  return r;
}

RemoteSettings ResolveRemote(const RemoteOptions& options) {
  return ResolveRemote(options, [](const char* name) { return std::getenv(name); });
}

}  // namespace xet::cli
