#include "server/auth/revocation_list.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace xet {

RevocationList::RevocationList(Index& index, int64_t refresh_seconds, Clock clock)
    : index_(index),
      refresh_seconds_(std::max<int64_t>(0, refresh_seconds)),
      clock_(std::move(clock)) {}

bool RevocationList::IsRevokedOrExpired(std::string_view token_id) {
  const int64_t now = clock_();
  const std::shared_ptr<const Cutoffs> cutoffs = Current(now);
  const auto it = cutoffs->find(std::string(token_id));
  return it != cutoffs->end() && it->second <= now;
}

uint64_t RevocationList::loads() const {
  MutexLock lock(mu_);
  return loads_;
}

std::shared_ptr<const RevocationList::Cutoffs> RevocationList::Current(int64_t now) {
  {
    MutexLock lock(mu_);
    if (cutoffs_ && now < next_load_at_) return cutoffs_;
  }
  MutexLock loading(load_mu_);
  {
    MutexLock lock(mu_);  // another caller may have reloaded meanwhile
    if (cutoffs_ && now < next_load_at_) return cutoffs_;
  }
  auto tokens = index_.ListTokens();
  std::shared_ptr<Cutoffs> fresh;
  if (tokens.ok()) {
    fresh = std::make_shared<Cutoffs>();
    for (const TokenRecord& t : *tokens) {
      if (t.revoked) {
        (*fresh)[t.id] = std::numeric_limits<int64_t>::min();
      } else if (t.expires_at != 0) {
        (*fresh)[t.id] = t.expires_at;
      }
    }
  }
  MutexLock lock(mu_);
  ++loads_;
  if (fresh) {
    cutoffs_ = std::move(fresh);
    next_load_at_ = now + refresh_seconds_;
  } else {
    if (!cutoffs_) cutoffs_ = std::make_shared<const Cutoffs>();
    next_load_at_ = now + std::min<int64_t>(refresh_seconds_, 1);
  }
  return cutoffs_;
}

}  // namespace xet
