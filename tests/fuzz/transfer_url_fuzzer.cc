// libFuzzer target: signed transfer URL query strings (server/transfer/transfer_signer.h), as the
// transfer route reads them (HttpRequest::QueryParam, then TransferSigner::Verify).
//
// Input: "RANGES\nEXPIRES\nREST". RANGES (a `bytes=` set) and EXPIRES (decimal) are
// signed into a URL; REST is used twice: as a raw query string verified as is, and as
// edits (three bytes each: little-endian position, new byte) applied to the signed URL's query.
// Properties:
//   - parsing and verifying never crash; every failure names its error kind;
//   - a URL the signer wrote verifies before its expiry, with exactly the signed ranges,
//     is kExpired from its expiry on, and never verifies for another xorb;
//   - an edited query verifies if and only if its decoded X-Xet-Signed-Range, Expires and
//     Signature values are exactly the signed ones (any other change to what is signed
//     is refused; re-encoding the same values is not a change);
//   - a raw query that verifies carries exactly the values the signer writes for the
//     ranges and expiry it verified with;
//   - heap growth stays linear in the input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/support/heap_meter.h"
#include "fuzz/support/property_check.h"
#include "http/message.h"
#include "protocol/byte_range.h"
#include "server/transfer/transfer_signer.h"

namespace {

using xet::ByteRange;
using xet::TransferAuthError;

constexpr xet::fuzz::PropertyCheck Check("transfer_url_fuzzer");

const xet::TransferSigner& Signer() {
  static const xet::TransferSigner signer =
      std::move(xet::TransferSigner::Create("fuzz-secret-0123456789abcdef-0123456789").value());
  return signer;
}

xet::Hash XorbHash(uint8_t seed) {
  uint8_t bytes[32];
  for (int i = 0; i < 32; ++i) bytes[i] = static_cast<uint8_t>(seed + i * 13);
  return xet::Hash::FromBytes(bytes);
}

// The three decoded values the route reads from a query string.
struct Values {
  std::optional<std::string> range, expires, signature;
  friend bool operator==(const Values&, const Values&) = default;
};

Values Read(std::string_view query) {
  xet::HttpRequest req;
  req.query = std::string(query);
  return {req.QueryParam(xet::kSignedRangeParam), req.QueryParam(xet::kExpiresParam),
          req.QueryParam(xet::kSignatureParam)};
}

xet::TransferVerification Verify(const xet::Hash& xorb, const Values& v, int64_t now) {
  xet::TransferQuery q;
  if (v.range) q.signed_range = *v.range;
  if (v.expires) q.expires = *v.expires;
  if (v.signature) q.signature = *v.signature;
  auto result = Signer().Verify(xorb, q, now);
  Check(std::string_view(xet::TransferAuthErrorName(result.error)).size() > 0,
        "error without a name");
  Check(result.ok() == !result.ranges.empty(), "ranges only on success");
  return result;
}

std::string_view QueryOf(std::string_view url) {
  const size_t q = url.find('?');
  Check(q != std::string_view::npos, "signed URL without a query");
  return url.substr(q + 1);
}

std::string SignedQuery(const xet::Hash& xorb, const std::vector<ByteRange>& ranges,
                        int64_t expires) {
  auto url = Signer().SignUrl("http://127.0.0.1:1", xorb, ranges, expires);
  Check(url.ok(), "signing failed");
  return std::string(QueryOf(*url));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  xet::fuzz::HeapScope heap;
  const xet::Hash xorb = XorbHash(1);
  const size_t nl1 = input.find('\n');
  const size_t nl2 = nl1 == std::string_view::npos ? nl1 : input.find('\n', nl1 + 1);
  const std::string_view rest = nl2 == std::string_view::npos ? input : input.substr(nl2 + 1);

  // REST as a raw query, against a fixed clock.
  constexpr int64_t kNow = 1'700'000'000;
  const Values raw = Read(rest);
  const auto raw_result = Verify(xorb, raw, kNow);
  if (raw_result.ok()) {
    const int64_t expires = std::strtoll(raw.expires->c_str(), nullptr, 10);
    Check(Read(SignedQuery(xorb, raw_result.ranges, expires)) == raw,
          "a query verified that the signer would not have written");
  }

  if (nl2 != std::string_view::npos) {
    auto ranges = xet::ParseByteRanges(input.substr(0, nl1));
    const std::string expires_text(input.substr(nl1 + 1, nl2 - nl1 - 1));
    const int64_t expires = std::strtoll(expires_text.c_str(), nullptr, 10) % 4'000'000'000;
    if (ranges.ok() && expires > 0) {
      const std::string query = SignedQuery(xorb, *ranges, expires);
      const Values original = Read(query);
      const auto good = Verify(xorb, original, expires - 1);
      Check(good.ok() && good.ranges == *ranges, "a signed URL does not verify");
      Check(Verify(xorb, original, expires).error == TransferAuthError::kExpired,
            "a signed URL outlives its expiry");
      Check(Verify(XorbHash(2), original, expires - 1).error == TransferAuthError::kBadSignature,
            "a signed URL verifies for another xorb");

      std::string edited = query;
      for (size_t i = 0; i + 2 < rest.size() && !edited.empty(); i += 3) {
        const size_t at = static_cast<uint8_t>(rest[i]) | static_cast<uint8_t>(rest[i + 1]) << 8;
        edited[at % edited.size()] = rest[i + 2];
      }
      const Values changed = Read(edited);
      const auto result = Verify(xorb, changed, expires - 1);
      Check(result.ok() == (changed == original), "an edited query verifies iff unchanged");
      if (result.ok()) Check(result.ranges == *ranges, "edited query verifies other ranges");
    }
  }
  heap.Check("transfer_url_fuzzer", size, 64, 1 << 20);
  return 0;
}
