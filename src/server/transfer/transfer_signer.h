// Self-authorizing xorb fetch URLs: the server signs (xorb hash, exact set of byte ranges,
// expiry) with HMAC-SHA256 under a deployment-wide secret, and the transfer route verifies
// the signature instead of asking for a token.
//
// URL form (the signed-range parameter mirrors the Hub's transfer URLs):
//   <base_url>/v1/transfer/xorb/default/<xorb hash>?X-Xet-Signed-Range=bytes%3D0-1023%2C2048-4095
//       &Expires=<unix seconds>&Signature=<64 lowercase hex digits>
// The signed message is
//   "xetstore-transfer-v1\n" || 32 raw xorb-hash bytes || <decoded X-Xet-Signed-Range value>
//   || "\n" || <Expires digits>
// so a signature binds the hash, the exact range-set string and the expiry; changing any of
// them (or re-encoding the range set differently) invalidates it. A URL is valid while
// now < Expires.
#pragma once

#include <openssl/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "format/hash.h"
#include "protocol/byte_range.h"

namespace xet {

inline constexpr std::string_view kTransferPathPrefix = "/v1/transfer/xorb/default/";
inline constexpr std::string_view kSignedRangeParam = "X-Xet-Signed-Range";
inline constexpr std::string_view kExpiresParam = "Expires";
inline constexpr std::string_view kSignatureParam = "Signature";

enum class TransferAuthError : uint8_t {
  kNone = 0,
  kMalformed,     // a parameter is missing or not in the form this server writes (400)
  kBadSignature,  // the signature does not match (403)
  kExpired,       // the signature matches but Expires has passed (403)
};
const char* TransferAuthErrorName(TransferAuthError error);

// The url-decoded values of a transfer URL's query parameters (empty when absent).
struct TransferQuery {
  std::string_view signed_range;  // X-Xet-Signed-Range, e.g. "bytes=0-1023,2048-4095"
  std::string_view expires;       // Expires
  std::string_view signature;     // Signature
};

struct TransferVerification {
  TransferAuthError error = TransferAuthError::kNone;
  std::vector<ByteRange> ranges;  // the signed set, in signed order, when ok()
  bool ok() const { return error == TransferAuthError::kNone; }
};

namespace internal {
struct EvpMacCtxDeleter {
  void operator()(EVP_MAC_CTX* ctx) const;
};
}  // namespace internal

// Signs many URLs that share a base URL and an expiry (one reconstruction response),
// reusing one keyed HMAC context. Not thread-safe: make one per response being built.
class TransferUrlSigner {
 public:
  TransferUrlSigner(TransferUrlSigner&&) = default;
  TransferUrlSigner& operator=(TransferUrlSigner&&) = default;

  // Upper bound of the bytes WriteUrl writes for `num_ranges` ranges.
  size_t MaxUrlSize(size_t num_ranges) const;
  // Writes the signed URL for `ranges` (inclusive, in the order given; callers pass them
  // ascending) of xorb `xorb` whose Xet string is xorb_hex[0..63]. `out` must have
  // MaxUrlSize(ranges.size()) bytes. Returns the end of what was written.
  char* WriteUrl(char* out, const Hash& xorb, const char* xorb_hex,
                 std::span<const ByteRange> ranges);
  std::string Url(const Hash& xorb, std::span<const ByteRange> ranges);

  int64_t expires() const { return expires_; }

 private:
  friend class TransferSigner;
  TransferUrlSigner() = default;

  std::unique_ptr<EVP_MAC_CTX, internal::EvpMacCtxDeleter> ctx_;
  bool ctx_fresh_ = true;  // keyed and unused: no re-init needed before the first message
  std::string base_url_;
  int64_t expires_ = 0;
  std::string expires_text_;
  std::string message_;  // reused message buffer
};

class TransferSigner {
 public:
  static constexpr size_t kMinSecretSize = 32;

  // InvalidArgument when the secret is shorter than kMinSecretSize bytes.
  static Result<TransferSigner> Create(std::string_view secret);

  TransferSigner(TransferSigner&&) = default;
  TransferSigner& operator=(TransferSigner&&) = default;
  ~TransferSigner();

  // A signer for URLs under `base_url` (scheme://host[:port][/prefix], no query; a trailing
  // '/' is dropped) valid until `expires` (unix seconds). InvalidArgument for a base URL
  // with characters that would need escaping in a URL or JSON string; Internal when
  // OpenSSL fails.
  Result<TransferUrlSigner> NewUrlSigner(std::string_view base_url, int64_t expires) const;

  // One signed URL (convenience over NewUrlSigner).
  Result<std::string> SignUrl(std::string_view base_url, const Hash& xorb,
                              std::span<const ByteRange> ranges, int64_t expires) const;

  // Checks a transfer request's query against the xorb named in its path. Constant-time
  // signature comparison. On success returns the signed ranges.
  TransferVerification Verify(const Hash& xorb, const TransferQuery& query, int64_t now) const;

 private:
  explicit TransferSigner(std::string secret) : secret_(std::move(secret)) {}
  std::string secret_;
};

}  // namespace xet
