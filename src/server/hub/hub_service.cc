#include "server/hub/hub_service.h"

#include <chrono>

namespace xet {
namespace {

int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

HubService::HubService(HubServiceConfig config, Index& index, ObjectStore& objects,
                       TokenService& tokens)
    : public_url_(std::move(config.public_url)),
      gate_(index, tokens),
      admin_({config.list_default_limit, config.list_max_limit},
             config.now_ms ? config.now_ms : SystemNowMs, index, gate_, public_url_),
      xet_tokens_(config.cas_token_ttl_s, tokens, gate_, public_url_),
      batch_(config.max_batch_ops, config.now_ms ? config.now_ms : SystemNowMs, index, gate_),
      listing_({config.tree_default_limit, config.tree_max_limit, config.max_paths_info}, index,
               gate_, public_url_),
      resolve_(config.xorb_cache_bytes, index, objects, gate_, public_url_) {}

}  // namespace xet
