// Authentication and authorization of API requests.
//
// Two kinds of bearer tokens:
// - User tokens, "hf_" + 40 hex digits: created by `xetstore token create` (or the admin
//   token written at first start), stored in the Index only as their SHA-256, revocable.
// - CAS tokens, "xet_<payload>.<mac>": short-lived, minted by the token endpoints for one
//   scope and permission on behalf of a user token (whose id the payload carries), verified
//   with an HMAC keyed from the server secret, so any node sharing the secret accepts them.
//   Revoking (or the expiry of) the user token stops them too, within the revocation
//   refresh interval: see RevocationList (no Index read per request).
// A principal sees only what its scopes registered (empty scopes = admin, sees all).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "server/auth/revocation_list.h"
#include "store/index.h"

namespace xet {

struct Principal {
  std::string token_id;
  Permission permission = Permission::kRead;
  std::vector<Scope> scopes;  // empty = every scope (admin)

  bool IsAdmin() const { return permission == Permission::kAdmin; }
  // Scopes to filter reads by; empty means unrestricted.
  std::span<const Scope> read_scopes() const { return scopes; }
};

// PermissionDenied unless `p` has at least `needed` ("read" < "write" < "admin").
Status RequirePermission(const Principal& p, Permission needed);

// The scope a write by `p` lands in: its only scope; "default" for an admin with no scope
// restriction. PermissionDenied for a token with several scopes (ambiguous target).
Result<Scope> WriteScope(const Principal& p);

const char* PermissionName(Permission p);
std::optional<Permission> ParsePermission(std::string_view name);

struct NewUserToken {
  std::string secret;  // the token string; shown to the user once, never stored
  TokenRecord record;
};

class TokenService {
 public:
  using Clock = std::function<int64_t()>;  // unix seconds

  // `secret` keys CAS-token signatures (>= 32 bytes). `index` must outlive the service.
  // `revocation_refresh_s`: how stale the list of revoked user tokens that CAS tokens are
  // checked against may get (see RevocationList).
  TokenService(Index& index, std::span<const uint8_t> secret, Clock clock = {},
               int64_t revocation_refresh_s = RevocationList::kDefaultRefreshSeconds);

  // Creates and stores a user token. expires_at = 0: never expires.
  Result<NewUserToken> CreateUserToken(std::string name, Permission permission,
                                       std::vector<Scope> scopes, int64_t expires_at = 0);

  // A CAS token for `scope` with `permission`, valid until `expires_at`, on behalf of
  // `token_id` (recorded for audit).
  std::string MintCasToken(const std::string& token_id, Permission permission, const Scope& scope,
                           int64_t expires_at) const;

  // Resolves an Authorization header value ("Bearer <token>"). Unauthenticated when it is
  // missing, malformed, unknown, revoked or expired (a CAS token also when the user token
  // it was minted for is revoked or expired, as of the revocation list).
  Result<Principal> Authenticate(std::optional<std::string_view> authorization) const;
  // Resolves a bare token string.
  Result<Principal> AuthenticateToken(std::string_view token) const;

  int64_t Now() const { return clock_(); }

 private:
  Result<Principal> VerifyCasToken(std::string_view token) const;

  Index& index_;
  std::vector<uint8_t> cas_key_;
  Clock clock_;
  // A cache consulted by the const verification path; thread-safe itself.
  mutable RevocationList revocations_;
};

// SHA-256 of a token string, the form the Index stores.
Hash TokenSecretHash(std::string_view token);

}  // namespace xet
