#include "server/auth/token_service.h"

#include <chrono>
#include <nlohmann/json.hpp>

#include "common/ascii.h"
#include "format/sha256.h"
#include "server/auth/crypto_util.h"

namespace xet {
namespace {

constexpr std::string_view kUserPrefix = "hf_";
constexpr std::string_view kCasPrefix = "xet_";
constexpr size_t kUserTokenHexLen = 40;
constexpr size_t kMaxTokenLength = 8192;

int64_t SystemNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

const char* PermissionName(Permission p) {
  switch (p) {
    case Permission::kRead:
      return "read";
    case Permission::kWrite:
      return "write";
    case Permission::kAdmin:
      return "admin";
  }
  return "read";
}

std::optional<Permission> ParsePermission(std::string_view name) {
  if (name == "read") return Permission::kRead;
  if (name == "write") return Permission::kWrite;
  if (name == "admin") return Permission::kAdmin;
  return std::nullopt;
}

Status RequirePermission(const Principal& p, Permission needed) {
  if (static_cast<int>(p.permission) >= static_cast<int>(needed)) return Status::Ok();
  return Status::PermissionDenied(std::string("this operation needs a ") + PermissionName(needed) +
                                  " token; this token is " + PermissionName(p.permission));
}

Result<Scope> WriteScope(const Principal& p) {
  if (p.scopes.size() == 1) return p.scopes[0];
  if (p.scopes.empty() && p.IsAdmin()) return Scope("default");
  return Status::PermissionDenied(
      "token is valid for several scopes; use a token limited to the one you write to");
}

Hash TokenSecretHash(std::string_view token) { return Hash::FromArray(Sha256Of(AsBytes(token))); }

TokenService::TokenService(Index& index, std::span<const uint8_t> secret, Clock clock,
                           int64_t revocation_refresh_s)
    : index_(index),
      clock_(clock ? std::move(clock) : Clock(SystemNow)),
      revocations_(index, revocation_refresh_s, clock_) {
  const Hmac256 k = HmacSha256(secret, "xetstore cas-token v1");
  cas_key_.assign(k.begin(), k.end());
}

Result<NewUserToken> TokenService::CreateUserToken(std::string name, Permission permission,
                                                   std::vector<Scope> scopes, int64_t expires_at) {
  NewUserToken t;
  t.secret = std::string(kUserPrefix) + SecureRandomHex(kUserTokenHexLen / 2);
  t.record.id = "tok_" + SecureRandomHex(6);
  t.record.name = std::move(name);
  t.record.secret_hash = TokenSecretHash(t.secret);
  t.record.permission = permission;
  t.record.scopes = std::move(scopes);
  t.record.created_at = Now();
  t.record.expires_at = expires_at;
  XET_RETURN_IF_ERROR(index_.PutToken(t.record));
  return t;
}

std::string TokenService::MintCasToken(const std::string& token_id, Permission permission,
                                       const Scope& scope, int64_t expires_at) const {
  const nlohmann::json payload = {
      {"t", token_id}, {"p", PermissionName(permission)}, {"s", scope}, {"e", expires_at}};
  const std::string body = Base64UrlEncode(AsBytes(payload.dump()));
  const Hmac256 mac = HmacSha256(cas_key_, body);
  return std::string(kCasPrefix) + body + "." + Base64UrlEncode(mac);
}

Result<Principal> TokenService::VerifyCasToken(std::string_view token) const {
  const std::string_view rest = token.substr(kCasPrefix.size());
  const size_t dot = rest.find('.');
  if (dot == std::string_view::npos) return Status::Unauthenticated("malformed token");
  const std::string_view body = rest.substr(0, dot);
  const auto mac = Base64UrlDecode(rest.substr(dot + 1));
  const Hmac256 want = HmacSha256(cas_key_, body);
  if (!mac || !ConstantTimeEqual(*mac, want)) {
    return Status::Unauthenticated("invalid token signature");
  }
  const auto raw = Base64UrlDecode(body);
  if (!raw) return Status::Unauthenticated("malformed token");
  const auto j = nlohmann::json::parse(raw->begin(), raw->end(), nullptr, false);
  if (!j.is_object() || !j.contains("e") || !j["e"].is_number_integer() || !j.contains("p") ||
      !j["p"].is_string() || !j.contains("s") || !j["s"].is_string() || !j.contains("t") ||
      !j["t"].is_string()) {
    return Status::Unauthenticated("malformed token");
  }
  if (j["e"].get<int64_t>() <= Now()) {
    return Status::Unauthenticated("token expired; request a new one");
  }
  const auto perm = ParsePermission(j["p"].get<std::string>());
  if (!perm) return Status::Unauthenticated("malformed token");
  Principal p;
  p.token_id = j["t"].get<std::string>();
  if (revocations_.IsRevokedOrExpired(p.token_id)) {
    return Status::Unauthenticated(
        "token revoked: the user token it was issued for is revoked or expired");
  }
  p.permission = *perm == Permission::kAdmin ? Permission::kWrite : *perm;
  p.scopes = {j["s"].get<std::string>()};
  return p;
}

Result<Principal> TokenService::AuthenticateToken(std::string_view token) const {
  if (token.size() > kMaxTokenLength) return Status::Unauthenticated("token too long");
  if (token.starts_with(kCasPrefix)) return VerifyCasToken(token);
  if (!token.starts_with(kUserPrefix)) {
    return Status::Unauthenticated("unknown token format (expected hf_... or xet_...)");
  }
  XET_ASSIGN_OR_RETURN(auto record, index_.FindTokenBySecretHash(TokenSecretHash(token)));
  if (!record) return Status::Unauthenticated("invalid token");
  if (record->revoked) return Status::Unauthenticated("token revoked");
  if (record->expires_at != 0 && record->expires_at <= Now()) {
    return Status::Unauthenticated("token expired");
  }
  Principal p;
  p.token_id = record->id;
  p.permission = record->permission;
  p.scopes = record->scopes;
  return p;
}

Result<Principal> TokenService::Authenticate(std::optional<std::string_view> authorization) const {
  if (!authorization || authorization->empty()) {
    return Status::Unauthenticated("missing Authorization header (Bearer token)");
  }
  const std::string_view v = *authorization;
  const size_t sp = v.find(' ');
  if (sp == std::string_view::npos || !EqualsIgnoreAsciiCase(v.substr(0, sp), "bearer")) {
    return Status::Unauthenticated("Authorization must be 'Bearer <token>'");
  }
  std::string_view token = v.substr(sp + 1);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  return AuthenticateToken(token);
}

}  // namespace xet
