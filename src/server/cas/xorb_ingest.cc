#include "server/cas/xorb_ingest.h"

#include <cstring>

#include "format/xorb.h"
#include "format/xorb_footer.h"
#include "server/auth/crypto_util.h"
#include "store/index_support.h"

namespace xet {

Result<XorbIngestResult> IngestXorb(const Hash& claimed_hash, std::span<const uint8_t> body,
                                    const Scope& scope, Index& index, ObjectStore& objects) {
  XET_ASSIGN_OR_RETURN(VerifiedXorb verified,
                       ParseAndVerifyXorb(body, claimed_hash, XorbTrailingBytes::kReject));
  if (verified.table.empty()) return Status::InvalidArgument("xorb has no chunks");

  XorbIngestResult result;
  result.num_chunks = verified.table.size();
  result.raw_bytes = verified.table.unpacked_offsets.back();

  const std::string key = XorbKey(claimed_hash);
  XET_ASSIGN_OR_RETURN(bool known, index.HasXorb(claimed_hash));
  uint64_t object_size = 0;
  if (!known) {
    std::array<uint8_t, kXorbFooterNonceSize> nonce{};
    const auto random = SecureRandomBytes(nonce.size());
    std::memcpy(nonce.data(), random.data(), nonce.size());
    const XorbFooter footer = MakeXorbFooter(claimed_hash, verified.table, nonce);
    std::vector<uint8_t> footer_bytes;
    footer_bytes.reserve(XorbFooterInfoLength(verified.table.size()) + 4);
    XET_RETURN_IF_ERROR(AppendXorbFooter(footer, &footer_bytes));
    object_size = body.size() + footer_bytes.size();
    // The object lands before the index row: a crash in between leaves an unindexed object
    // (harmless, overwritten never, re-indexed on the next upload), never a dangling row.
    // Body and footer are written as two pieces: no 64 MiB copy to join them.
    const std::span<const uint8_t> parts[] = {body, footer_bytes};
    // false: a concurrent upload of the same xorb won the race
    XET_ASSIGN_OR_RETURN(result.stored, objects.PutParts(key, parts));
  } else {
    XET_ASSIGN_OR_RETURN(object_size, objects.Size(key));
  }
  XET_ASSIGN_OR_RETURN(
      result.inserted,
      index.PutXorb(XorbRecordOf(claimed_hash, verified.table, object_size), scope));
  return result;
}

}  // namespace xet
