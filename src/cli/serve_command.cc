#include "cli/serve_command.h"

#include <malloc.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "cli/config_file.h"
#include "cli/node_config.h"
#include "cli/output.h"
#include "cli/process_resources.h"
#include "common/atomic_file.h"
#include "common/human_bytes.h"
#include "http/http_server.h"
#include "http/router.h"
#include "http/shutdown_signals.h"
#include "server/auth/crypto_util.h"
#include "server/auth/token_service.h"
#include "server/cas/cas_routes.h"
#include "server/cas/cas_service.h"
#include "server/hub/hub_routes.h"
#include "server/hub/hub_service.h"
#include "server/instrumented_stores.h"
#include "server/object_cache_metrics.h"
#include "server/read_only_stores.h"
#include "server/transfer/transfer_signer.h"
#include "store/cache/cached_object_store.h"
#include "store/index.h"
#include "store/object_store.h"

namespace xet::cli {
namespace {

constexpr size_t kSecretBytes = 32;
constexpr size_t kMmapThresholdBytes = 4 << 20;

// The state of one node: its stores and its signing secret.
struct Node {
  std::unique_ptr<Index> index;
  std::unique_ptr<ObjectStore> objects;
  std::string secret;  // hex
};

Result<std::string> LoadOrCreateSecret(const std::string& path) {
  auto existing = ReadSmallFile(path);
  if (existing.ok()) {
    std::string s = *existing;
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    if (s.size() < 2 * kSecretBytes) {
      return Status::InvalidArgument(path + ": secret too short (need " +
                                     std::to_string(2 * kSecretBytes) + " hex characters)");
    }
    return s;
  }
  if (existing.status().code() != Status::Code::kNotFound) return existing.status();
  const std::string secret = SecureRandomHex(kSecretBytes);
  XET_RETURN_IF_ERROR(WriteFileAtomically(path, secret + "\n", 0600));
  return secret;
}

Result<Node> OpenNode(const NodeConfig& config, bool need_objects) {
  std::error_code ec;
  std::filesystem::create_directories(config.data_dir, ec);
  if (ec)
    return Status::IoError("cannot create data directory " + config.data_dir + ": " + ec.message());
  Node node;
  XET_ASSIGN_OR_RETURN(node.index, OpenConfiguredIndex(config));
  if (need_objects) {
    XET_ASSIGN_OR_RETURN(auto objects, OpenConfiguredObjects(config));
    XET_ASSIGN_OR_RETURN(node.objects, WithObjectCache(config, std::move(objects)));
    XET_ASSIGN_OR_RETURN(node.secret, LoadOrCreateSecret(config.SecretPath()));
  }
  return node;
}

// On first start (no token at all), creates the admin token, saves it with mode 0600 and
// prints it once.
Status EnsureAdminToken(const NodeConfig& config, TokenService& tokens, Index& index) {
  XET_ASSIGN_OR_RETURN(auto existing, index.ListTokens());
  if (!existing.empty()) return Status::Ok();
  XET_ASSIGN_OR_RETURN(NewUserToken t, tokens.CreateUserToken("admin", Permission::kAdmin, {}));
  XET_RETURN_IF_ERROR(WriteFileAtomically(config.AdminTokenPath(), t.secret + "\n", 0600));
  std::fprintf(stderr,
               "Created the admin token (shown once; also saved with mode 0600 to %s):\n  %s\n",
               config.AdminTokenPath().c_str(), t.secret.c_str());
  return Status::Ok();
}

Result<ServerOptions> ServerOptionsFrom(const NodeConfig& config) {
  ServerOptions o;
  const size_t colon = config.listen.rfind(':');
  if (colon == std::string::npos) {
    return Status::InvalidArgument("--listen must be ADDRESS:PORT, got '" + config.listen + "'");
  }
  o.address = config.listen.substr(0, colon);
  if (o.address.size() >= 2 && o.address.front() == '[' && o.address.back() == ']') {
    o.address = o.address.substr(1, o.address.size() - 2);
  }
  const std::string port = config.listen.substr(colon + 1);
  char* end = nullptr;
  const unsigned long p = std::strtoul(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p > 65535) {
    return Status::InvalidArgument("bad port in --listen '" + config.listen + "'");
  }
  o.port = static_cast<uint16_t>(p);
  o.worker_threads = config.workers;
  o.limits.max_connections = config.max_connections;
  o.limits.max_connections_per_address = config.max_connections_per_address;
  o.limits.max_body_bytes_in_flight = uint64_t{config.body_budget_mb} << 20;
  if (!config.access_log) o.access_log = nullptr;
  return o;
}

// Request handlers run on --workers threads (16 by default). glibc gives threads their own
// malloc arenas (up to 8 per core), and an arena grows (page faults, zero-filled pages) on
// its thread's first large answers: the first requests after a start paid for up to 16
// separate warm-ups, one per worker. A few shared arenas, one per core up to 4, are warm
// after the first requests. Call before any thread starts.
void ShareMallocArenas() {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  mallopt(M_ARENA_MAX, static_cast<int>(std::min(cores, 4u)));
}

int RunServe(const NodeConfig& config) {
  ShareMallocArenas();
  ShutdownSignals signals;  // before any thread starts
  // Large buffers (request bodies as they grow, answers) come from their own mappings and go
  // back to the system when freed, so RSS returns near idle after a large upload and its
  // peak is lower (docs/SERVER.md "Memory" has the measurement).
  FixMmapThreshold(kMmapThresholdBytes);
  if (auto files = RaiseOpenFileLimit(); !files.ok()) {
    std::fprintf(stderr, "xetstore: warning: %s\n", files.status().ToString().c_str());
  }
  auto node = OpenNode(config, true);
  if (!node.ok()) return ReportFailure(node.status());
  TokenService tokens(*node->index, AsBytes(node->secret), {}, config.revocation_refresh_s);
  if (Status st = EnsureAdminToken(config, tokens, *node->index); !st.ok()) {
    return ReportFailure(st);
  }
  auto signer = TransferSigner::Create(node->secret);
  if (!signer.ok()) return ReportFailure(signer.status());
  auto options = ServerOptionsFrom(config);
  if (!options.ok()) return ReportFailure(options.status(), "example: --listen 127.0.0.1:8080");
  options->metrics = std::make_shared<Metrics>();

  CasServiceConfig cas_config;
  cas_config.public_url = config.PublicUrl();
  cas_config.answer_cache_bytes = config.answer_cache_mb << 20;
  cas_config.recent_xorb_cache_bytes = config.recent_xorb_cache_mb << 20;
  // Requests go through decorators that count storage failures on /metrics.
  std::unique_ptr<Index> index = InstrumentIndex(*node->index, *options->metrics);
  std::unique_ptr<ObjectStore> objects = InstrumentObjectStore(*node->objects, *options->metrics);
  if (const ObjectCache* cache = AsObjectCache(*node->objects)) {
    ExportObjectCacheMetrics(*cache, *options->metrics);
    const ObjectCacheStats held = cache->Stats();
    std::fprintf(stderr, "xetstore: object cache %s: %s in %llu objects (of %s)\n",
                 config.ObjectCacheDir().c_str(), HumanBytes(held.bytes).c_str(),
                 static_cast<unsigned long long>(held.entries),
                 HumanBytes(uint64_t{config.object_cache_mb} << 20).c_str());
  }
  // Read-only: writes are refused before they reach (and are counted by) the decorators.
  std::unique_ptr<Index> instrumented_index;
  std::unique_ptr<ObjectStore> instrumented_objects;
  if (config.read_only) {
    instrumented_index = std::move(index);
    instrumented_objects = std::move(objects);
    index = ReadOnlyIndex(*instrumented_index);
    objects = ReadOnlyObjectStore(*instrumented_objects);
    std::fprintf(stderr, "xetstore: read-only: every write is answered 503\n");
  }
  CasService cas(cas_config, *index, *objects, tokens, *signer, options->metrics.get());
  HubServiceConfig hub_config;
  hub_config.public_url = config.PublicUrl();
  HubService hub(hub_config, *index, *objects, tokens);
  if (config.warm_cache_mb > 0) {
    auto warm = cas.WarmCaches(config.warm_cache_mb << 20, std::chrono::seconds(2));
    if (!warm.ok()) return ReportFailure(warm.status().WithContext("warming the caches"));
    std::fprintf(stderr,
                 "xetstore: cached %zu xorb tables, %zu file records and %zu whole-file plans "
                 "(%.1f MiB) in %.0f ms\n",
                 warm->xorbs, warm->files, warm->plans,
                 static_cast<double>(warm->bytes) / (1 << 20), warm->ms);
  }
  Router router;
  if (Status st = RegisterCasRoutes(router, cas); !st.ok()) return ReportFailure(st);
  if (Status st = RegisterHubRoutes(router, hub); !st.ok()) return ReportFailure(st);

  auto server = HttpServer::Start(std::move(router), std::move(*options));
  if (!server.ok()) {
    return ReportFailure(server.status(), "is another process using that port? try --listen");
  }
  std::string public_url = config.PublicUrl();
  if (config.public_url.empty()) {  // the bound port may differ from --listen (port 0)
    const std::string host = config.listen.substr(0, config.listen.rfind(':'));
    public_url = "http://" + host + ":" + std::to_string((*server)->port());
    cas.SetPublicUrl(public_url);
    hub.SetPublicUrl(public_url);
  }
  std::fprintf(stderr, "xetstore serving on %s (data in %s); Ctrl-C or SIGTERM stops it\n",
               public_url.c_str(), config.data_dir.c_str());
  const int sig = signals.Wait();
  std::fprintf(stderr, "xetstore: received signal %d, finishing in-flight requests\n", sig);
  (*server)->Stop();
  return kExitOk;
}

}  // namespace

void AddServeCommand(CLI::App& app, int* exit_code) {
  auto config = std::make_shared<NodeConfig>();
  CLI::App* serve = app.add_subcommand(
      "serve",
      "Run a Xet CAS server with Hub-compatible buckets on the embedded default: a SQLite\n"
      "index and a local object directory under --data-dir. On first start it creates the\n"
      "data directory, a signing secret and an admin token (printed once, saved to\n"
      "<data-dir>/admin-token).");
  auto config_file = std::make_shared<std::string>();
  AddConfigFileOption(serve, config_file.get());
  AddNodeOptions(serve, config.get(), NodeOptions::kServe);
  serve->callback([serve, config, config_file, exit_code] {
    if (!config_file->empty()) {
      if (Status st = ApplyConfigFile(serve, *config_file); !st.ok()) {
        PrintError(st.message(), "fix the file, or give the option as a flag");
        *exit_code = kExitUsage;
        return;
      }
    }
    *exit_code = RunServe(*config);
  });
}

}  // namespace xet::cli
