// The connection options every client command shares (--endpoint, --token, --retries) and
// the one place that turns them into the client's RemoteSettings. A command registers the
// options with AddRemoteOptions and, when it runs, opens a RemoteConnection
// (client/bucket_transfer/remote_connection.h) with ResolveRemote(options).
//
// Resolution, first match wins:
//   endpoint: --endpoint, $XETSTORE_ENDPOINT, $HF_ENDPOINT, http://127.0.0.1:8080
//   token:    --token, $XETSTORE_TOKEN, $HF_TOKEN, none (anonymous: public buckets only)
//   cache:    none with --no-cache; else --cache-dir, $XETSTORE_CACHE_DIR,
//             $XDG_CACHE_HOME/xetstore, $HOME/.cache/xetstore, none
// An empty value counts as not given.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "client/bucket_transfer/remote_settings.h"

namespace xet::cli {

inline constexpr const char* kDefaultEndpoint = "http://127.0.0.1:8080";

struct RemoteOptions {
  std::string endpoint;  // as given on the command line ("" = not given)
  std::string token;
  int retries = 5;        // retries of a failed request after the first attempt
  std::string cache_dir;  // --cache-dir ("" = not given)
  bool no_cache = false;
  bool chunk_cache = false;  // --chunk-cache: also keep downloaded chunks
};

// Adds --endpoint, --token and --retries (in a "Connection" group) to `cmd`, bound to
// `options`. May be called for several commands with the same `options`.
void AddRemoteOptions(CLI::App* cmd, RemoteOptions* options);
// Adds --cache-dir, --no-cache and --chunk-cache (in a "Cache" group), for the commands
// that transfer file data (cp, sync).
void AddCacheOptions(CLI::App* cmd, RemoteOptions* options);

// The settings after the resolution above (retries as given). `getenv` is the environment
// lookup (nullptr for unset); tests pass their own.
using EnvLookup = std::function<const char*(const char*)>;
RemoteSettings ResolveRemote(const RemoteOptions& options, const EnvLookup& getenv);
// The same from the process environment.
RemoteSettings ResolveRemote(const RemoteOptions& options);

}  // namespace xet::cli
