// The clients of one server for the length of a task (a command run, a mount, a gateway):
// one HttpClient (connection pool, retries per the settings) and the HubClient over it;
// CasClients for buckets on demand, with their CAS tokens fetched through the Hub API.
#pragma once

#include <memory>
#include <string>

#include "client/bucket_transfer/remote_settings.h"
#include "client/cas/cas_client.h"
#include "client/hub/hub_client.h"
#include "client/transfer_stats.h"
#include "client/transport/http_client.h"
#include "common/result.h"

namespace xet {

// Retries are counted into `stats` when given. Connects lazily: constructing one sends no
// request. Not copyable.
class RemoteConnection {
 public:
  explicit RemoteConnection(RemoteSettings settings, TransferStats* stats = nullptr);
  ~RemoteConnection();
  RemoteConnection(const RemoteConnection&) = delete;
  RemoteConnection& operator=(const RemoteConnection&) = delete;

  HubClient& hub() { return *hub_; }
  HttpClient& http() { return *http_; }
  const std::string& endpoint() const { return settings_.endpoint; }
  bool has_token() const { return !settings_.token.empty(); }

  // The persistent shard cache (client/cache/local_shard_cache.h) of `bucket_id` on this
  // endpoint: <cache_dir>/shards/<first 32 hex digits of SHA-256("endpoint\nbucket_id")>,
  // one directory per (server, bucket) because a shard describes what one scope of one
  // server holds. "" when there is no cache directory.
  std::string ShardCacheDir(const std::string& bucket_id) const;
  // The download chunk cache (client/cache/chunk_cache.h; bounded LRU, shared by every
  // server and bucket: entries are named by xorb hash and every download is checked against
  // its file hash): settings.chunk_cache_dir, "" for none.
  const std::string& ChunkCacheDir() const { return settings_.chunk_cache_dir; }

  // A CAS client for `bucket_id` with read or write CAS tokens fetched (and refreshed)
  // through the Hub API. The first token is fetched here, so an unknown bucket, a token
  // without the permission or an unreachable server fails before any work starts. The
  // returned object owns its token source; it must not outlive this connection.
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
  RemoteSettings settings_;
  std::unique_ptr<HttpClient> http_;
  std::unique_ptr<HubClient> hub_;
};

}  // namespace xet
