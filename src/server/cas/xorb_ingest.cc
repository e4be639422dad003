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
  // Writes the object: body and footer as two pieces (no 64 MiB copy to join them).
  auto store_object = [&]() -> Result<uint64_t> {
    std::array<uint8_t, kXorbFooterNonceSize> nonce{};
    const auto random = SecureRandomBytes(nonce.size());
    std::memcpy(nonce.data(), random.data(), nonce.size());
    const XorbFooter footer = MakeXorbFooter(claimed_hash, verified.table, nonce);
    std::vector<uint8_t> footer_bytes;
    footer_bytes.reserve(XorbFooterInfoLength(verified.table.size()) + 4);
    XET_RETURN_IF_ERROR(AppendXorbFooter(footer, &footer_bytes));
    const std::span<const uint8_t> parts[] = {body, footer_bytes};
    // false: a concurrent upload of the same xorb won the race
    XET_ASSIGN_OR_RETURN(result.stored, objects.PutParts(key, parts));
    return body.size() + footer_bytes.size();
  };
  XET_ASSIGN_OR_RETURN(bool known, index.HasXorb(claimed_hash));
  uint64_t object_size = 0;
  if (known) {
    auto size = objects.Size(key);
    if (size.ok()) {
      object_size = *size;
    } else if (size.status().code() == Status::Code::kNotFound) {
      known = false;  // gc retired it since HasXorb: store it again
    } else {
      return size.status();
    }
  }
  if (!known) {
    // The object lands before the index row: a crash in between leaves an unindexed object
    // (harmless, overwritten never, re-indexed on the next upload), never a dangling row.
    XET_ASSIGN_OR_RETURN(object_size, store_object());
  }
  XET_ASSIGN_OR_RETURN(
      result.inserted,
      index.PutXorb(XorbRecordOf(claimed_hash, verified.table, object_size), scope));
  if (known && result.inserted) {
    // The row was gone when PutXorb ran: gc retired the xorb after HasXorb, deleted its
    // object and finished. The new row needs the object again. (A crash right here leaves
    // the row without its object until the next upload of this xorb stores it: HasXorb is
    // true, the object is not found, so it is written.)
    XET_ASSIGN_OR_RETURN(object_size, store_object());
  }
  return result;
}

}  // namespace xet
