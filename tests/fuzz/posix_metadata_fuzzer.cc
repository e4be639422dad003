// libFuzzer target: the "posix" object's codec (protocol/posix_metadata.h) and base64
// (protocol/base64.h).
//
// Input: JSON text for DecodePosixJson, and raw bytes for base64.
// Properties:
//   - nothing crashes or throws; a rejection is InvalidArgument with a message;
//   - accepted metadata passes ValidatePosix, encodes within kMaxPosixJsonBytes, and
//     decodes back from its encoding to the same value (the encoding is canonical);
//   - Base64Decode(Base64Encode(bytes)) == bytes, and an accepted base64 text decodes to
//     3/4 of its length minus its padding;
//   - heap growth stays linear in the input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz/support/heap_meter.h"
#include "fuzz/support/property_check.h"
#include "protocol/base64.h"
#include "protocol/posix_metadata.h"

namespace {

constexpr xet::fuzz::PropertyCheck Check("posix_metadata_fuzzer");

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  xet::fuzz::HeapScope heap;
  auto p = xet::DecodePosixJson(text);
  if (!p.ok()) {
    Check.Refusal(p.status(), xet::Status::Code::kInvalidArgument);
  } else {
    Check(xet::ValidatePosix(*p).ok(), "accepted metadata breaks the rules");
    const std::string encoded = xet::EncodePosixJson(*p);
    Check(encoded.size() <= xet::kMaxPosixJsonBytes, "encoding past the limit");
    auto again = xet::DecodePosixJson(encoded);
    Check(again.ok() && *again == *p, "encoding does not decode to the same metadata");
    Check(xet::EncodePosixJson(*again) == encoded, "encoding is not canonical");
  }
  const std::string b64 = xet::Base64Encode(text);
  auto back = xet::Base64Decode(b64);
  Check(back.has_value() && *back == text, "base64 round trip");
  if (auto raw = xet::Base64Decode(text)) {
    size_t pad = 0;
    while (pad < 2 && pad < size && text[size - 1 - pad] == '=') ++pad;
    Check(raw->size() == size / 4 * 3 - pad, "base64 decoded length");
  }
  heap.Check("posix_metadata_fuzzer", size, 64, 1 << 20);
  return 0;
}
