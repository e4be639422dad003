// Where a server node keeps its state, and how its options are resolved: a command-line
// flag wins over an XETSTORE_* environment variable, which wins over the --config file
// (TOML/INI `key = value`), which wins over the default.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"
#include "server/auth/revocation_list.h"
#include "store/index.h"
#include "store/object_store.h"

namespace xet::cli {

struct NodeConfig {
  std::string listen = "127.0.0.1:8080";
  std::string data_dir = "./xetstore-data";
  std::string public_url;  // default: http://<listen>
  std::string index_url;   // default: sqlite file <data_dir>/index.sqlite; postgres://...
  size_t index_connections =
      kDefaultPostgresConnections;  // PostgreSQL: the node's connection pool size
  std::string objects_url;          // default: <data_dir>/objects; s3://BUCKET[/PREFIX] for S3
  // With an s3:// object store (each falls back to the AWS_* environment; see s3_options.h).
  std::string s3_endpoint;     // http[s]://HOST[:PORT]
  std::string s3_region;       // default us-east-1
  std::string s3_access_key;   // AWS_ACCESS_KEY_ID
  std::string s3_secret_file;  // a file holding the secret key (AWS_SECRET_ACCESS_KEY)
  std::string secret_file;     // default: <data_dir>/secret
  int workers = 16;
  size_t max_connections = 1024;
  size_t max_connections_per_address = 512;  // 0: no per-address limit
  size_t body_budget_mb = 1024;              // request bodies in flight at once; 0: no limit
  size_t answer_cache_mb = 256;       // whole reconstruction answers of large files kept in memory
  size_t recent_xorb_cache_mb = 256;  // chunk data of recently uploaded xorbs kept in memory
  size_t warm_cache_mb = 128;         // record caches filled at start, MiB each
  // Disk (MiB) for the node's copies of objects read from the object store; 0: no cache.
  size_t object_cache_mb = 0;
  std::string object_cache_dir;  // default: <data_dir>/object-cache
  bool access_log = true;
  bool read_only = false;  // refuse every write (503): serve reads during a migration's cut-over
  // How stale (seconds) the list of revoked user tokens that CAS tokens are checked against
  // may get: a revoked token's CAS tokens stop within this long.
  int64_t revocation_refresh_s = RevocationList::kDefaultRefreshSeconds;

  // Whether index_url names a PostgreSQL database (postgres:// or postgresql://).
  bool IndexIsPostgres() const;
  std::string IndexPath() const;
  std::string ObjectsPath() const;
  std::string SecretPath() const;
  std::string ObjectCacheDir() const;
  std::string AdminTokenPath() const { return data_dir + "/admin-token"; }
  std::string PublicUrl() const;
};

// The index `config` names: the SQLite file (IndexPath()), or the PostgreSQL database of
// index_url with a pool of index_connections.
Result<std::unique_ptr<Index>> OpenConfiguredIndex(const NodeConfig& config);

// The object store `config` names: the directory ObjectsPath(), or the S3 bucket of an
// s3:// objects_url (with the --s3-* options, then the AWS_* environment).
Result<std::unique_ptr<ObjectStore>> OpenConfiguredObjects(const NodeConfig& config);

// `objects` behind the node's local object cache (store/cache/cached_object_store.h) when
// object_cache_mb > 0, else `objects` itself. For `serve` only: the operator's tools read
// every object once and must not fill (or trust) a node's cache.
Result<std::unique_ptr<ObjectStore>> WithObjectCache(const NodeConfig& config,
                                                     std::unique_ptr<ObjectStore> objects);

// Which of a node's options a command takes: the index's (--data-dir, --index,
// --index-connections), the storage's (those and --objects, --s3-*: operator commands such
// as gc and fsck), or every serve option. With a `prefix` (kIndex and kStorage only), the
// flags are named --<prefix>data-dir etc. and read no environment variable: a second
// deployment's options, as `migrate --to-*` takes them.
enum class NodeOptions { kIndex, kStorage, kServe };
void AddNodeOptions(CLI::App* cmd, NodeConfig* config, NodeOptions which,
                    std::string_view prefix = {});

}  // namespace xet::cli
