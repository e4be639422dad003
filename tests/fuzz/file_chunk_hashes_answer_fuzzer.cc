// libFuzzer target: the client's reading of a GET /v2/file-chunk-hashes answer
// (client/cas/file_chunk_hashes_json.h), which a partial-edit upload trusts to compose a
// file.
//
// Input: "SIZE\nBODY": the decimal file size the client asks about, then the answer. No
// newline: the whole input is the body, for a file of 1,000,000 bytes.
// Properties:
//   - nothing crashes or throws; a rejection is Corruption with a message;
//   - an accepted answer is consistent: fileSize is the size asked about; windows are
//     non-empty, ascending, disjoint and inside the file; one gap entry per window plus
//     one, null exactly for an empty gap; each gap's subtree starts the file only for the
//     first gap, ends it only for the last, and its nodes' sizes add up to the gap;
//   - heap growth stays linear in the input.
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "client/cas/file_chunk_hashes_json.h"
#include "fuzz/support/heap_meter.h"
#include "fuzz/support/property_check.h"

namespace {

constexpr xet::fuzz::PropertyCheck Check("file_chunk_hashes_answer_fuzzer");

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  uint64_t file_size = 1'000'000;
  if (const size_t nl = text.find('\n'); nl != std::string_view::npos) {
    uint64_t v = 0;
    const auto [p, ec] = std::from_chars(text.data(), text.data() + nl, v);
    if (ec == std::errc() && p == text.data() + nl) file_size = v;
    text.remove_prefix(nl + 1);
  }
  xet::fuzz::HeapScope heap;
  auto a = xet::ParseFileChunkHashesJson(text, file_size);
  if (!a.ok()) {
    Check.Refusal(a.status(), xet::Status::Code::kCorruption);
  } else {
    Check(a->file_size == file_size, "fileSize");
    Check(!a->windows.empty(), "no windows");
    Check(a->gaps.size() == a->windows.size() + 1, "gap count");
    uint64_t prev = 0;
    for (size_t g = 0; g < a->gaps.size(); ++g) {
      const uint64_t start = g == 0 ? 0 : a->windows[g - 1].end;
      const uint64_t end = g == a->windows.size() ? file_size : a->windows[g].start;
      if (g < a->windows.size()) {
        const auto& w = a->windows[g];
        Check(w.start < w.end && w.end <= file_size && w.start >= prev, "window bounds");
        prev = w.end;
      }
      Check(a->gaps[g].has_value() == (start < end), "null exactly for an empty gap");
      if (a->gaps[g]) {
        Check(a->gaps[g]->at_start() == (g == 0), "at_start");
        Check(a->gaps[g]->at_end() == (g == a->windows.size()), "at_end");
        uint64_t bytes = 0;
        for (const auto& n : a->gaps[g]->nodes()) bytes += n.size;
        Check(bytes == end - start, "subtree bytes");
      }
    }
  }
  heap.Check("file_chunk_hashes_answer_fuzzer", size, 64, 1 << 20);
  return 0;
}
