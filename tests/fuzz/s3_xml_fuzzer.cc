// libFuzzer target: the parsers of S3's XML answers (store/s3/s3_xml.h), which read what an
// S3-compatible server (or anything pretending to be one) sends.
//
// Input: one document, given to every parser.
// Properties:
//   - nothing crashes or throws; a rejection is Corruption with a message;
//   - an accepted listing has a continuation token whenever it is truncated, and never
//     more objects than the input has bytes;
//   - heap growth (operator new; expat's own allocations are malloc) stays linear in the
//     input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "fuzz/support/heap_meter.h"
#include "fuzz/support/property_check.h"
#include "store/s3/s3_xml.h"

namespace {

constexpr xet::fuzz::PropertyCheck Check("s3_xml_fuzzer");

void CheckRejection(const xet::Status& st) {
  Check(st.code() == xet::Status::Code::kCorruption, "rejection code");
  Check(!st.message().empty(), "rejection without a message");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view xml(reinterpret_cast<const char*>(data), size);
  xet::fuzz::HeapScope heap;
  if (auto page = xet::ParseListObjectsV2(xml); page.ok()) {
    Check(!page->truncated || !page->next_token.empty(), "truncated page without a token");
    Check(page->objects.size() <= size, "more objects than bytes");
  } else {
    CheckRejection(page.status());
  }
  if (auto err = xet::ParseS3Error(xml); !err.ok()) CheckRejection(err.status());
  if (auto id = xet::ParseInitiateMultipartUpload(xml); id.ok()) {
    Check(!id->empty(), "empty upload id accepted");
  } else {
    CheckRejection(id.status());
  }
  bool completed = false;
  if (auto done = xet::ParseCompleteMultipartUpload(xml, &completed); done.ok()) {
    Check(completed || !done->code.empty(), "neither completed nor an error");
  } else {
    CheckRejection(done.status());
  }
  heap.Check("s3_xml_fuzzer", size, 16, 1 << 20);
  return 0;
}
