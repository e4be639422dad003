// libFuzzer target for the shard parser. Properties checked on every input:
//   - ParseShard never crashes, reads out of bounds or allocates without bound (ASan/UBSan
//     and libFuzzer's -rss_limit_mb / -malloc_limit_mb catch those);
//   - if it accepts the input, SerializeShard reproduces the input byte-for-byte, and the
//     re-parse equals the first parse;
//   - ValidateShardContents / ValidateUploadShard and ComputeShardLayout run on every
//     accepted shard, and the layout's total size equals the input size.
// Any violation aborts, so the fuzzer reports it with the input.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "format/shard_parser.h"
#include "format/shard_validation.h"
#include "format/shard_writer.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "shard_parser_fuzzer: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> input(data, size);
  auto parsed = xet::ParseShard(input);
  if (!parsed.ok()) {
    if (parsed.status().message().empty()) Fail("error without a message");
    return 0;
  }
  if (xet::ComputeShardLayout(*parsed).total_size != size) Fail("layout size != input size");
  (void)xet::ValidateShardContents(*parsed);
  (void)xet::ValidateUploadShard(*parsed);

  auto bytes = xet::SerializeShard(*parsed);
  if (!bytes.ok()) Fail("a parsed shard does not serialize");
  if (bytes->size() != size ||
      !std::equal(bytes->begin(), bytes->end(), input.begin(), input.end())) {
    Fail("re-serialization differs from the input");
  }
  auto reparsed = xet::ParseShard(*bytes);
  if (!reparsed.ok()) Fail("re-serialized shard does not parse");
  if (!(*reparsed == *parsed)) Fail("re-parse differs from the first parse");

  // The upload form must parse too, to the same files and CAS blocks.
  auto upload = xet::SerializeShardForUpload(*parsed);
  if (!upload.ok()) Fail("upload form does not serialize");
  auto upload_parsed = xet::ParseShard(*upload);
  if (!upload_parsed.ok()) Fail("upload form does not parse");
  if (upload_parsed->footer.has_value() || !(upload_parsed->files == parsed->files) ||
      !(upload_parsed->cas_infos == parsed->cas_infos)) {
    Fail("upload form differs");
  }
  return 0;
}
