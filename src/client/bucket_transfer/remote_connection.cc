#include "client/bucket_transfer/remote_connection.h"

#include <utility>

#include "format/sha256.h"

namespace xet {

RemoteConnection::RemoteConnection(RemoteSettings settings, TransferStats* stats)
    : settings_(std::move(settings)) {
  HttpClientOptions http_options;
  http_options.retry.max_attempts = settings_.retries + 1;
  if (stats != nullptr) {
    http_options.on_retry = [stats](const Status&) { stats->retries += 1; };
  }
  http_ = std::make_unique<HttpClient>(std::move(http_options));
  hub_ = std::make_unique<HubClient>(*http_, settings_.endpoint, settings_.token);
}

RemoteConnection::~RemoteConnection() = default;

std::string RemoteConnection::ShardCacheDir(const std::string& bucket_id) const {
  if (settings_.cache_dir.empty()) return {};
  const std::string key = settings_.endpoint + "\n" + bucket_id;
  const std::string hex =
      Sha256Hex(Sha256Of({reinterpret_cast<const uint8_t*>(key.data()), key.size()}));
  return settings_.cache_dir + "/shards/" + hex.substr(0, 32);
}

RemoteConnection::Cas::Cas(std::unique_ptr<CasTokenSource> tokens, HttpClient& http)
    : tokens_(std::move(tokens)), client_(http, *tokens_) {}

Result<std::unique_ptr<RemoteConnection::Cas>> RemoteConnection::OpenCas(
    const std::string& bucket_id, bool write) {
  auto tokens = MakeHubTokenSource(*hub_, bucket_id, write);
  XET_RETURN_IF_ERROR(tokens->Token().status());
  return std::make_unique<Cas>(std::move(tokens), *http_);
}

}  // namespace xet
