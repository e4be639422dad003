// libFuzzer target: the reading of a download's sidecar (client/download/part_file.h), the
// "<dest>.xetpart.json" an interrupted download resumes from. The client wrote it, but it
// sits next to the user's files and may be truncated, edited or left by another version.
//
// Input: the sidecar's text.
// Properties:
//   - nothing crashes or throws; a refused sidecar is InvalidArgument with a message (the
//     download then starts over);
//   - an accepted sidecar is a fixed point of writing and reading: its serialization reads
//     back, and serializes to the same text again;
//   - heap growth stays linear in the input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "client/download/part_file.h"
#include "fuzz/support/heap_meter.h"
#include "fuzz/support/property_check.h"

namespace {

constexpr xet::fuzz::PropertyCheck Check("part_sidecar_fuzzer");

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  xet::fuzz::HeapScope heap;
  auto sidecar = xet::ParseSidecar(text);
  if (!sidecar.ok()) {
    Check.Refusal(sidecar.status(), xet::Status::Code::kInvalidArgument);
  } else {
    const std::string written = xet::SerializeSidecar(*sidecar);
    auto again = xet::ParseSidecar(written);
    Check(again.ok(), "a written sidecar does not read back");
    Check(again->file_hash == sidecar->file_hash && again->size == sidecar->size &&
              again->block_bytes == sidecar->block_bytes &&
              again->done.size() == sidecar->done.size(),
          "a written sidecar reads back different");
    Check(xet::SerializeSidecar(*again) == written, "writing is not a fixed point");
  }
  heap.Check("part_sidecar_fuzzer", size, 64, 1 << 20);
  return 0;
}
