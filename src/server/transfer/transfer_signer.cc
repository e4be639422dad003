#include "server/transfer/transfer_signer.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/params.h>

#include <charconv>
#include <cstring>

#include "common/decimal.h"

namespace xet {
namespace {

constexpr std::string_view kMessagePrefix = "xetstore-transfer-v1\n";
constexpr std::string_view kQueryRangeStart = "?X-Xet-Signed-Range=bytes%3D";
constexpr std::string_view kQueryRangeSep = "%2C";
constexpr std::string_view kQueryExpires = "&Expires=";
constexpr std::string_view kQuerySignature = "&Signature=";
constexpr size_t kMacSize = 32;
constexpr size_t kMaxRangeText = 2 * 20 + 1;  // "FIRST-LAST"
constexpr char kHex[] = "0123456789abcdef";

char* Put(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

char* PutRange(char* p, const ByteRange& r) {
  p = WriteDecimal(p, r.first);
  *p++ = '-';
  return WriteDecimal(p, r.last);
}

bool ValidBaseUrlChar(char c) {
  return c > 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '?' && c != '#';
}

// Strict: 1..19 digits, no sign, no leading zero (except "0").
bool ParseExpires(std::string_view s, int64_t* value) {
  if (s.empty() || s.size() > 18 || (s.size() > 1 && s[0] == '0')) return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *value = v;
  return true;
}

bool DecodeHexSignature(std::string_view s, unsigned char out[kMacSize]) {
  if (s.size() != 2 * kMacSize) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (size_t i = 0; i < kMacSize; ++i) {
    int hi = nibble(s[2 * i]);
    int lo = nibble(s[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<unsigned char>(hi << 4 | lo);
  }
  return true;
}

// The signed message for already-validated components.
std::string BuildMessage(const Hash& xorb, std::string_view signed_range,
                         std::string_view expires) {
  std::string m;
  m.reserve(kMessagePrefix.size() + Hash::kSize + signed_range.size() + 1 + expires.size());
  m.append(kMessagePrefix);
  m.append(reinterpret_cast<const char*>(xorb.data()), Hash::kSize);
  m.append(signed_range);
  m.push_back('\n');
  m.append(expires);
  return m;
}

}  // namespace

namespace internal {
void EvpMacCtxDeleter::operator()(EVP_MAC_CTX* ctx) const { EVP_MAC_CTX_free(ctx); }
}  // namespace internal

const char* TransferAuthErrorName(TransferAuthError error) {
  switch (error) {
    case TransferAuthError::kNone:
      return "ok";
    case TransferAuthError::kMalformed:
      return "malformed signed URL";
    case TransferAuthError::kBadSignature:
      return "invalid signature";
    case TransferAuthError::kExpired:
      return "signed URL expired";
  }
  return "unknown";
}

// ---- TransferUrlSigner ----

size_t TransferUrlSigner::MaxUrlSize(size_t num_ranges) const {
  return base_url_.size() + kTransferPathPrefix.size() + 64 + kQueryRangeStart.size() +
         num_ranges * (kMaxRangeText + kQueryRangeSep.size()) + kQueryExpires.size() +
         expires_text_.size() + kQuerySignature.size() + 2 * kMacSize;
}

char* TransferUrlSigner::WriteUrl(char* out, const Hash& xorb, const char* xorb_hex,
                                  std::span<const ByteRange> ranges) {
  // The message: prefix || raw hash || "bytes=" ranges || "\n" || expires.
  size_t message_bound = kMessagePrefix.size() + Hash::kSize + 6 +
                         ranges.size() * (kMaxRangeText + 1) + 1 + expires_text_.size();
  if (message_.size() < message_bound) message_.resize(message_bound);
  char* m = message_.data();
  m = Put(m, kMessagePrefix);
  std::memcpy(m, xorb.data(), Hash::kSize);
  m += Hash::kSize;
  m = Put(m, "bytes=");

  char* p = Put(out, base_url_);
  p = Put(p, kTransferPathPrefix);
  std::memcpy(p, xorb_hex, 64);
  p += 64;
  p = Put(p, kQueryRangeStart);
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (i > 0) {
      p = Put(p, kQueryRangeSep);
      *m++ = ',';
    }
    char* text = p;
    p = PutRange(p, ranges[i]);
    size_t n = static_cast<size_t>(p - text);
    std::memcpy(m, text, n);
    m += n;
  }
  *m++ = '\n';
  m = Put(m, expires_text_);
  p = Put(p, kQueryExpires);
  p = Put(p, expires_text_);
  p = Put(p, kQuerySignature);

  unsigned char mac[EVP_MAX_MD_SIZE];
  size_t mac_len = 0;
  bool ok = ctx_fresh_ || EVP_MAC_init(ctx_.get(), nullptr, 0, nullptr) == 1;
  ctx_fresh_ = false;
  ok = ok &&
       EVP_MAC_update(ctx_.get(), reinterpret_cast<const unsigned char*>(message_.data()),
                      static_cast<size_t>(m - message_.data())) == 1 &&
       EVP_MAC_final(ctx_.get(), mac, &mac_len, sizeof(mac)) == 1 && mac_len == kMacSize;
  if (!ok) {
    // OpenSSL failed (out of memory): emit a signature that never verifies.
    std::memset(mac, 0, sizeof(mac));
  }
  for (size_t i = 0; i < kMacSize; ++i) {
    *p++ = kHex[mac[i] >> 4];
    *p++ = kHex[mac[i] & 0xF];
  }
  return p;
}

std::string TransferUrlSigner::Url(const Hash& xorb, std::span<const ByteRange> ranges) {
  std::string url(MaxUrlSize(ranges.size()), '\0');
  char hex[64];
  xorb.ToHex(hex);
  char* end = WriteUrl(url.data(), xorb, hex, ranges);
  url.resize(static_cast<size_t>(end - url.data()));
  return url;
}

// ---- TransferSigner ----

Result<TransferSigner> TransferSigner::Create(std::string_view secret) {
  if (secret.size() < kMinSecretSize) {
    return Status::InvalidArgument("transfer signing secret must be at least 32 bytes");
  }
  return TransferSigner(std::string(secret));
}

TransferSigner::~TransferSigner() {
  if (!secret_.empty()) OPENSSL_cleanse(secret_.data(), secret_.size());
}

Result<TransferUrlSigner> TransferSigner::NewUrlSigner(std::string_view base_url,
                                                       int64_t expires) const {
  while (!base_url.empty() && base_url.back() == '/') base_url.remove_suffix(1);
  if (base_url.empty()) return Status::InvalidArgument("empty base URL");
  for (char c : base_url) {
    if (!ValidBaseUrlChar(c))
      return Status::InvalidArgument("base URL has a character that needs escaping");
  }
  if (expires < 0) return Status::InvalidArgument("negative expiry");

  TransferUrlSigner signer;
  signer.base_url_ = std::string(base_url);
  signer.expires_ = expires;
  char buf[24];
  char* end = std::to_chars(buf, buf + sizeof(buf), expires).ptr;
  signer.expires_text_.assign(buf, end);

  EVP_MAC* mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  if (mac == nullptr) return Status::Internal("EVP_MAC_fetch(HMAC) failed");
  signer.ctx_.reset(EVP_MAC_CTX_new(mac));
  EVP_MAC_free(mac);  // the context keeps its own reference
  if (!signer.ctx_) return Status::Internal("EVP_MAC_CTX_new failed");
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                         OSSL_PARAM_construct_end()};
  if (EVP_MAC_init(signer.ctx_.get(), reinterpret_cast<const unsigned char*>(secret_.data()),
                   secret_.size(), params) != 1) {
    return Status::Internal("EVP_MAC_init failed");
  }
  signer.ctx_fresh_ = true;
  return signer;
}

Result<std::string> TransferSigner::SignUrl(std::string_view base_url, const Hash& xorb,
                                            std::span<const ByteRange> ranges,
                                            int64_t expires) const {
  XET_ASSIGN_OR_RETURN(TransferUrlSigner signer, NewUrlSigner(base_url, expires));
  return signer.Url(xorb, ranges);
}

TransferVerification TransferSigner::Verify(const Hash& xorb, const TransferQuery& query,
                                            int64_t now) const {
  TransferVerification v;
  int64_t expires = 0;
  unsigned char given[kMacSize];
  RangeParseOptions strict;
  strict.allow_open_end = false;
  strict.allow_whitespace = false;
  auto ranges = ParseByteRanges(query.signed_range, strict);
  if (!ranges.ok() || ranges->empty() || !ParseExpires(query.expires, &expires) ||
      !DecodeHexSignature(query.signature, given)) {
    v.error = TransferAuthError::kMalformed;
    return v;
  }
  std::string message = BuildMessage(xorb, query.signed_range, query.expires);
  unsigned char expected[EVP_MAX_MD_SIZE];
  unsigned int expected_len = 0;
  if (HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(), expected,
           &expected_len) == nullptr ||
      expected_len != kMacSize || CRYPTO_memcmp(expected, given, kMacSize) != 0) {
    v.error = TransferAuthError::kBadSignature;
    return v;
  }
  if (now >= expires) {
    v.error = TransferAuthError::kExpired;
    return v;
  }
  v.ranges = std::move(ranges).value();
  return v;
}

}  // namespace xet
