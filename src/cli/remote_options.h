// The connection options every client command shares (--endpoint, --token, --retries) and
// the one place that turns them into clients. A command registers the options with
// AddRemoteOptions and, when it runs, opens a RemoteConnection from them.
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
#include <memory>
#include <string>

#include "client/cas/cas_client.h"
#include "client/hub/hub_client.h"
#include "client/transfer_stats.h"
#include "client/transport/http_client.h"

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

// The endpoint and token after the resolution above. `getenv` is the environment lookup
// (nullptr for unset); tests pass their own.
struct ResolvedRemote {
  std::string endpoint;  // without trailing '/'
  std::string token;
  std::string cache_dir;        // "" = no cache
  std::string chunk_cache_dir;  // <cache_dir>/chunks with --chunk-cache, else ""
};
using EnvLookup = std::function<const char*(const char*)>;
ResolvedRemote ResolveRemote(const RemoteOptions& options, const EnvLookup& getenv);

// The clients of one command run: one HttpClient (connection pool, retries per the options)
// and the HubClient over it; CasClients for buckets on demand. Retries are counted into
// `stats` when given. Not copyable; lives for the command.
class RemoteConnection {
 public:
  // Resolves `options` from the process environment.
  explicit RemoteConnection(const RemoteOptions& options, TransferStats* stats = nullptr);
  ~RemoteConnection();
  RemoteConnection(const RemoteConnection&) = delete;
  RemoteConnection& operator=(const RemoteConnection&) = delete;

  HubClient& hub() { return *hub_; }
  HttpClient& http() { return *http_; }
  const std::string& endpoint() const { return resolved_.endpoint; }
  bool has_token() const { return !resolved_.token.empty(); }

  // The persistent shard cache (client/cache/local_shard_cache.h) of `bucket_id` on this endpoint:
  // <cache>/shards/<first 32 hex digits of SHA-256("endpoint\nbucket_id")>, one directory
  // per (server, bucket) because a shard describes what one scope of one server holds.
  // "" when there is no cache directory.
  std::string ShardCacheDir(const std::string& bucket_id) const;
  // The download chunk cache (client/cache/chunk_cache.h; bounded LRU, shared by every server and
  // bucket: entries are named by xorb hash and every download is checked against its file
  // hash), or "" unless --chunk-cache was given with a cache directory.
  const std::string& ChunkCacheDir() const { return resolved_.chunk_cache_dir; }

  // A CAS client for `bucket_id` with read or write CAS tokens fetched (and refreshed) through
  // the Hub API. The first token is fetched here, so an unknown bucket, a token without the
  // permission or an unreachable server fails before any work starts. The returned object
  // owns its token source; it must not outlive this connection.
  class Cas {
   public:
    Cas(std::unique_ptr<CasTokenSource> tokens, HttpClient& http);
    CasClient& client() { return client_; }

   private:
    std::unique_ptr<CasTokenSource> tokens_;
    CasClient client_;
  };
  Result<std::unique_ptr<Cas>> OpenCas(const std::string& bucket_id, bool write);

 private:
  ResolvedRemote resolved_;
  std::unique_ptr<HttpClient> http_;
  std::unique_ptr<HubClient> hub_;
};

}  // namespace xet::cli
