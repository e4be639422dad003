// libFuzzer target: the xorb parsers on arbitrary bytes. Runs the chunk-record parser in
// both trailing-bytes modes, ParseAndVerifyXorb without an expected hash, chunk
// extraction at offset 0, and the stored-xorb footer parser. Any crash, sanitizer report,
// or broken invariant (checked with __builtin_trap) is a bug.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "format/xorb.h"
#include "format/xorb_footer.h"

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> in(data, size);
  xet::ChunkCodec codec;

  auto strict = xet::ParseXorbRecords(in);
  auto lenient = xet::ParseXorbRecords(in, xet::XorbTrailingBytes::kAllow);
  if (strict.ok()) {
    Check(lenient.ok() && lenient->records == strict->records);
    Check(strict->end_offset == size);
  }
  if (lenient.ok()) {
    Check(lenient->end_offset <= size);
    size_t expect = 0;
    for (const auto& r : lenient->records) {
      Check(r.offset == expect);
      expect = r.end_offset();
    }
    Check(expect == lenient->end_offset);
  }

  auto verified =
      xet::ParseAndVerifyXorb(in, std::nullopt, xet::XorbTrailingBytes::kReject, &codec);
  if (verified.ok()) {
    Check(strict.ok() && verified->table.size() == strict->records.size());
    // A verified xorb re-verifies against its own hash, and its footer round-trips.
    Check(
        xet::ParseAndVerifyXorb(in, verified->hash, xet::XorbTrailingBytes::kReject, &codec).ok());
    std::vector<uint8_t> object(in.begin(), in.end());
    Check(
        xet::AppendXorbFooter(xet::MakeXorbFooter(verified->hash, verified->table), &object).ok());
    auto parts = xet::SplitStoredXorb(object);
    Check(parts.ok() && parts->chunk_bytes.size() == size);
    Check(xet::CheckXorbFooterHash(parts->footer).ok());
  }
  (void)xet::ParseAndVerifyXorb(in, std::nullopt, xet::XorbTrailingBytes::kAllow, &codec);

  std::vector<uint8_t> chunk;
  (void)xet::ExtractXorbChunk(in, codec, &chunk);

  auto footer = xet::ParseXorbFooter(in);
  if (footer.ok()) {
    std::vector<uint8_t> again(
        in.begin(),
        in.begin() + static_cast<std::ptrdiff_t>(
                         footer->boundary_offsets.empty() ? 0 : footer->boundary_offsets.back()));
    Check(xet::AppendXorbFooter(*footer, &again).ok());
    // Reserved buffer bytes are not preserved; compare the parse instead of the bytes.
    auto reparsed = xet::ParseXorbFooter(again);
    Check(reparsed.ok() && *reparsed == *footer);
  }
  auto parts = xet::SplitStoredXorb(in);
  if (parts.ok()) (void)xet::ParseAndVerifyXorb(parts->chunk_bytes, parts->footer.xorb_hash);
  return 0;
}
