// RevocationList: which user tokens are revoked or expired, as last read from the Index,
// so that the CAS tokens minted on their behalf (which carry the user token's id and are
// otherwise verified statelessly) can be refused without an Index read per request.
//
// The list is a snapshot of Index::ListTokens(), reloaded by the first check that finds it
// older than the refresh interval (the other callers of that moment wait for that one read
// and share it). So a user token revoked at time t (by `xetstore token revoke`, another
// process, or another node sharing the index) stops its CAS tokens at every check after
// t + interval, on every node reading that index, at the cost of one Index read per
// interval per node. If a reload fails, the previous snapshot (none refused before the
// first) stays in use and the reload is retried one second later: the index that could
// not be read is also the one a revocation would have to be read from.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/mutex.h"
#include "store/index.h"

namespace xet {

class RevocationList {
 public:
  using Clock = std::function<int64_t()>;  // unix seconds
  static constexpr int64_t kDefaultRefreshSeconds = 10;
  static constexpr int64_t kMaxRefreshSeconds = 30;

  // `index` must outlive the list; `refresh_seconds` >= 0 (0: reload on every check, for
  // tests); `clock` is required.
  RevocationList(Index& index, int64_t refresh_seconds, Clock clock);
  RevocationList(const RevocationList&) = delete;
  RevocationList& operator=(const RevocationList&) = delete;

  // True when the user token `token_id` was revoked, or had expired, as of the snapshot
  // (reloaded first if older than the refresh interval). Unknown ids are not refused: the
  // caller has already verified the CAS token's signature. Thread-safe.
  bool IsRevokedOrExpired(std::string_view token_id);

  // Index reads made so far (for tests: proves checks are not one read each).
  uint64_t loads() const;

 private:
  // Token id -> the unix second from which its CAS tokens are refused (INT64_MIN: revoked).
  using Cutoffs = std::unordered_map<std::string, int64_t>;
  std::shared_ptr<const Cutoffs> Current(int64_t now) EXCLUDES(load_mu_, mu_);

  Index& index_;
  const int64_t refresh_seconds_;
  const Clock clock_;
  Mutex load_mu_;  // held by the one caller reloading; taken before mu_
  mutable Mutex mu_;
  std::shared_ptr<const Cutoffs> cutoffs_ GUARDED_BY(mu_);  // null until the first load
  int64_t next_load_at_ GUARDED_BY(mu_) = 0;
  uint64_t loads_ GUARDED_BY(mu_) = 0;
};

}  // namespace xet
