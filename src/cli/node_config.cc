#include "cli/node_config.h"

#include <cstdlib>
#include <filesystem>
#include <optional>

#include "common/atomic_file.h"
#include "store/cache/cached_object_store.h"
#include "store/s3/s3_object_store.h"
#include "store/s3/s3_options.h"

namespace xet::cli {

bool NodeConfig::IndexIsPostgres() const {
  return index_url.starts_with("postgres://") || index_url.starts_with("postgresql://");
}

std::string NodeConfig::IndexPath() const {
  if (index_url.empty()) return data_dir + "/index.sqlite";
  if (index_url.starts_with("sqlite://")) return index_url.substr(9);
  return index_url;
}

Result<std::unique_ptr<Index>> OpenConfiguredIndex(const NodeConfig& config) {
  if (config.IndexIsPostgres())
    return OpenPostgresIndex(config.index_url, config.index_connections);
  return OpenSqliteIndex(config.IndexPath());
}

namespace {

// The S3 store's options: the flags, then the AWS_* environment.
Result<S3Options> S3OptionsFrom(const NodeConfig& config) {
  S3Options o;
  XET_RETURN_IF_ERROR(ParseS3Url(config.objects_url, &o));
  o.endpoint = config.s3_endpoint;
  if (!config.s3_region.empty()) o.region = config.s3_region;
  o.access_key = config.s3_access_key;
  if (!config.s3_secret_file.empty()) {
    XET_ASSIGN_OR_RETURN(std::string secret, ReadSmallFile(config.s3_secret_file));
    while (!secret.empty() && (secret.back() == '\n' || secret.back() == ' ')) secret.pop_back();
    o.secret_key = std::move(secret);
  }
  XET_RETURN_IF_ERROR(ApplyAwsEnvironment(
      [](const char* name) -> std::optional<std::string> {
        const char* v = std::getenv(name);
        if (v == nullptr) return std::nullopt;
        return std::string(v);
      },
      &o));
  return o;
}

}  // namespace

Result<std::unique_ptr<ObjectStore>> OpenConfiguredObjects(const NodeConfig& config) {
  if (config.objects_url.starts_with("s3://")) {
    XET_ASSIGN_OR_RETURN(S3Options s3, S3OptionsFrom(config));
    return OpenS3ObjectStore(std::move(s3));
  }
  return OpenLocalObjectStore(config.ObjectsPath());
}

std::string NodeConfig::ObjectsPath() const {
  if (objects_url.empty()) return data_dir + "/objects";
  if (objects_url.starts_with("file://")) return objects_url.substr(7);
  return objects_url;
}

std::string NodeConfig::ObjectCacheDir() const {
  return object_cache_dir.empty() ? data_dir + "/object-cache" : object_cache_dir;
}

Result<std::unique_ptr<ObjectStore>> WithObjectCache(const NodeConfig& config,
                                                     std::unique_ptr<ObjectStore> objects) {
  if (config.object_cache_mb == 0) return objects;
  ObjectCacheOptions options;
  options.dir = config.ObjectCacheDir();
  if (!config.objects_url.starts_with("s3://")) {
    // Evicting a copy deletes its file: the cache must share no file with the store.
    std::error_code ec;
    const auto cache = std::filesystem::weakly_canonical(options.dir, ec).string() + "/";
    const auto store = std::filesystem::weakly_canonical(config.ObjectsPath(), ec).string() + "/";
    if (cache.starts_with(store) || store.starts_with(cache)) {
      return Status::InvalidArgument("--object-cache-dir " + options.dir +
                                     " overlaps the object store's directory " +
                                     config.ObjectsPath());
    }
  }
  options.capacity_bytes = uint64_t{config.object_cache_mb} << 20;
  auto cached = OpenCachedObjectStore(std::move(objects), options);
  if (!cached.ok()) return cached.status().WithContext("opening the object cache " + options.dir);
  return cached;
}

std::string NodeConfig::SecretPath() const {
  return secret_file.empty() ? data_dir + "/secret" : secret_file;
}

std::string NodeConfig::PublicUrl() const {
  std::string url = public_url.empty() ? "http://" + listen : public_url;
  while (url.size() > 1 && url.back() == '/') url.pop_back();
  return url;
}

void AddNodeOptions(CLI::App* cmd, NodeConfig* c, NodeOptions which, std::string_view prefix) {
  // A storage option: "--<prefix><name>", read from `env` too when there is no prefix.
  auto storage = [&](const char* name, auto& value, const std::string& help,
                     const char* env) -> CLI::Option* {
    CLI::Option* opt = cmd->add_option("--" + std::string(prefix) + name, value,
                                       prefix.empty() ? help : "Destination: " + help);
    if (prefix.empty()) opt->envname(env);
    return opt;
  };
  storage("data-dir", c->data_dir,
          "Directory holding the index, the objects, the signing secret and the admin token",
          "XETSTORE_DATA_DIR")
      ->capture_default_str();
  storage("index", c->index_url,
          "Index backend: a SQLite file path (default <data-dir>/index.sqlite), or "
          "postgres://USER:PASS@HOST:PORT/DB for a PostgreSQL database shared by many nodes (any "
          "libpq connection URI)",
          "XETSTORE_INDEX");
  storage("index-connections", c->index_connections,
          "PostgreSQL index: connections this process keeps open at most",
          "XETSTORE_INDEX_CONNECTIONS")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  if (which == NodeOptions::kIndex) return;
  storage("objects", c->objects_url,
          "Object store: a directory (default <data-dir>/objects), or s3://BUCKET[/PREFIX] for "
          "an S3-compatible store (see the --s3-* options)",
          "XETSTORE_OBJECTS");
  storage("s3-endpoint", c->s3_endpoint,
          "S3 endpoint http[s]://HOST[:PORT] (default $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, "
          "else AWS's endpoint for the region)",
          "XETSTORE_S3_ENDPOINT");
  storage("s3-region", c->s3_region,
          "S3 region (default $AWS_REGION, $AWS_DEFAULT_REGION, else us-east-1)",
          "XETSTORE_S3_REGION");
  storage("s3-access-key", c->s3_access_key, "S3 access key id (default $AWS_ACCESS_KEY_ID)",
          "XETSTORE_S3_ACCESS_KEY");
  storage("s3-secret-file", c->s3_secret_file,
          "File holding the S3 secret access key (default $AWS_SECRET_ACCESS_KEY)",
          "XETSTORE_S3_SECRET_FILE");
  if (which == NodeOptions::kStorage) return;
  cmd->add_option("--listen", c->listen, "Address and port to listen on")
      ->envname("XETSTORE_LISTEN")
      ->capture_default_str();
  cmd->add_option("--public-url", c->public_url,
                  "Base URL put in the URLs the server hands out (default http://<listen>)")
      ->envname("XETSTORE_PUBLIC_URL");
  cmd->add_option("--secret-file", c->secret_file,
                  "Signing secret shared by the nodes of one deployment (default "
                  "<data-dir>/secret, created on first start)")
      ->envname("XETSTORE_SECRET_FILE");
  cmd->add_option("--workers", c->workers, "Request handler threads")
      ->envname("XETSTORE_WORKERS")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--max-connections", c->max_connections, "Open connections accepted at once")
      ->envname("XETSTORE_MAX_CONNECTIONS")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--max-connections-per-address", c->max_connections_per_address,
                  "Open connections accepted at once from one client IP address (503 beyond); "
                  "0 turns the limit off")
      ->envname("XETSTORE_MAX_CONNECTIONS_PER_ADDRESS")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  cmd->add_option("--body-budget-mb", c->body_budget_mb,
                  "Memory (MiB) request bodies in flight may hold at once; a body that does not "
                  "fit is answered 503 with Retry-After before it is read; 0 turns it off")
      ->envname("XETSTORE_BODY_BUDGET_MB")
      ->check(CLI::Range(0, 1 << 24))
      ->capture_default_str();
  cmd->add_option("--answer-cache-mb", c->answer_cache_mb,
                  "Memory (MiB) for whole reconstruction answers of large files, reused while "
                  "their signed URLs have 3/4 of their lifetime left; 0 turns it off")
      ->envname("XETSTORE_ANSWER_CACHE_MB")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--recent-xorb-cache-mb", c->recent_xorb_cache_mb,
                  "Memory (MiB) for the chunk data of recently uploaded xorbs, so the downloads "
                  "that follow an upload are answered without reading the disk; 0 turns it off")
      ->envname("XETSTORE_RECENT_XORB_CACHE_MB")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--revocation-refresh-s", c->revocation_refresh_s,
                  "Seconds between reloads of the revoked-token list: CAS tokens minted from a "
                  "revoked or expired user token are refused within this long")
      ->envname("XETSTORE_REVOCATION_REFRESH_S")
      ->check(CLI::Range(int64_t{1}, RevocationList::kMaxRefreshSeconds))
      ->capture_default_str();
  cmd->add_option("--warm-cache-mb", c->warm_cache_mb,
                  "At start, before listening, cache the chunk tables and file records of the "
                  "newest xorbs and files, up to this many MiB each; 0 turns it off")
      ->envname("XETSTORE_WARM_CACHE_MB")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--object-cache-mb", c->object_cache_mb,
                  "Disk (MiB) for this node's copies of the xorbs it serves, so a remote object "
                  "store (S3) is read once per object rather than once per download; the "
                  "least recently used copies are evicted; 0 turns it off")
      ->envname("XETSTORE_OBJECT_CACHE_MB")
      ->check(CLI::Range(size_t{0}, size_t{1} << 30))
      ->capture_default_str();
  cmd->add_option("--object-cache-dir", c->object_cache_dir,
                  "Directory of the object cache (default <data-dir>/object-cache); it must "
                  "not be the object store's own directory")
      ->envname("XETSTORE_OBJECT_CACHE_DIR");
  cmd->add_flag("--read-only", c->read_only,
                "Serve reads only: every upload, commit and bucket change is answered 503 "
                "\"read-only (maintenance)\" (e.g. while `xetstore migrate` copies the last "
                "changes before a cut-over)")
      ->envname("XETSTORE_READ_ONLY");
  cmd->add_flag("--access-log,!--no-access-log", c->access_log,
                "Log one JSON line per request to stderr")
      ->envname("XETSTORE_ACCESS_LOG");
}

}  // namespace xet::cli
