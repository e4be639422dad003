// libFuzzer target: the client's reading of a /v2/reconstructions answer
// (client/cas/reconstruction_json.h) and the two plans a download builds from it
// (client/download/file_plan.h, client/download/block_planner.h). A hostile or broken server
// controls every byte of that answer.
//
// Input: the answer's body. The plans are built for what the answer implies, so that
// well-formed answers reach the planners: the file plan for a file as long as the terms
// after offset_into_first_range, the block plan for the range of that many bytes starting at
// offset_into_first_range (the first term then starts the file).
// Properties:
//   - nothing crashes or throws; a rejection is Corruption with a message;
//   - an accepted answer keeps the parser's contract: terms and fetch ranges non-empty,
//     offset_into_first_range inside the first term, chunk detail of the right length
//     (chunk_lengths adding up to the term, chunk_offsets ascending and spanning the range's
//     bytes), every xorb listed once with at least one fetch entry, each with a URL and
//     ranges, every term's xorb among them, and every fetched byte where a xorb can
//     have one;
//   - a plan that is built is consistent: the file plan's pieces of the whole file are in
//     term order and name chunks inside their term, and its runs lie inside their fetch
//     range; the block plan's fetch tasks are non-empty;
//   - heap growth stays linear in the input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "client/cas/reconstruction_json.h"
#include "client/download/block_planner.h"
#include "client/download/file_plan.h"
#include "format/xorb_limits.h"
#include "fuzz/support/heap_meter.h"
#include "fuzz/support/property_check.h"

namespace {

constexpr xet::fuzz::PropertyCheck Check("reconstruction_answer_fuzzer");

void CheckAnswer(const xet::Reconstruction& r) {
  std::unordered_set<xet::Hash, xet::HashHasher> xorbs;
  for (const auto& [hash, entries] : r.xorbs) {
    Check(xorbs.insert(hash).second, "a xorb listed twice");
    Check(!entries.empty(), "a xorb without fetch entries");
    for (const xet::FetchEntry& e : entries) {
      Check(!e.url.empty(), "a fetch entry without a URL");
      Check(!e.ranges.empty(), "a fetch entry without ranges");
      for (const xet::FetchRange& fr : e.ranges) {
        Check(fr.chunk_start < fr.chunk_end, "an empty fetch range");
        Check(fr.byte_end < xet::kXorbMaxSize, "a fetch range past the end a xorb can have");
        Check(fr.byte_start <= fr.byte_end, "descending fetch bytes");
        if (!fr.chunk_offsets.empty()) {
          Check(fr.chunk_offsets.size() == size_t{fr.chunk_end} - fr.chunk_start + 1,
                "chunk_offsets length");
          Check(fr.chunk_offsets.front() == fr.byte_start, "chunk_offsets start");
          Check(fr.chunk_offsets.back() == fr.byte_end + 1, "chunk_offsets end");
          for (size_t i = 1; i < fr.chunk_offsets.size(); ++i) {
            Check(fr.chunk_offsets[i - 1] < fr.chunk_offsets[i], "chunk_offsets ascending");
          }
        }
      }
    }
  }
  for (const xet::ReconTerm& t : r.terms) {
    Check(t.chunk_start < t.chunk_end, "an empty term");
    Check(xorbs.contains(t.xorb_hash), "a term's xorb has no fetch entries");
    if (!t.chunk_lengths.empty()) {
      Check(t.chunk_lengths.size() == t.chunk_end - t.chunk_start, "chunk_lengths length");
      uint64_t sum = 0;
      for (uint32_t len : t.chunk_lengths) sum += len;
      Check(sum == t.unpacked_length, "chunk_lengths sum");
    }
  }
  if (!r.terms.empty()) {
    Check(r.offset_into_first_range < r.terms[0].unpacked_length, "offset past the first term");
  }
}

// The file size the answer describes, or nullopt when its lengths overflow.
std::optional<uint64_t> ImpliedSize(const xet::Reconstruction& r) {
  uint64_t total = 0;
  for (const xet::ReconTerm& t : r.terms) {
    if (t.unpacked_length > std::numeric_limits<uint64_t>::max() - total) return std::nullopt;
    total += t.unpacked_length;
  }
  return total - std::min(total, r.offset_into_first_range);
}

void CheckFilePlan(const xet::FilePlan& plan) {
  std::vector<xet::FilePlan::Piece> pieces;
  plan.Map(0, plan.size(), &pieces);
  uint32_t prev_term = 0;
  for (const auto& p : pieces) {
    Check(p.term < plan.terms().size() && p.term >= prev_term, "pieces out of term order");
    const auto& t = plan.terms()[p.term];
    Check(t.chunk_start <= p.first && p.first < p.end && p.end <= t.chunk_end,
          "a piece outside its term's chunks");
    prev_term = p.term;
  }
  std::vector<xet::FilePlan::Run> runs;
  plan.Runs(0, plan.size(), 1 << 20, &runs);
  for (const auto& run : runs) {
    const xet::FetchRange& fr = plan.entry(run).ranges[run.range];
    Check(fr.chunk_start <= run.first && run.first < run.end && run.end <= fr.chunk_end,
          "a run outside its fetch range's chunks");
    Check(fr.byte_start <= run.byte_first && run.byte_first <= run.byte_last &&
              run.byte_last <= fr.byte_end,
          "a run outside its fetch range's bytes");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  xet::fuzz::HeapScope heap;
  auto answer = xet::ParseReconstructionJson(body);
  if (!answer.ok()) {
    Check.Refusal(answer.status(), xet::Status::Code::kCorruption);
    heap.Check("reconstruction_answer_fuzzer", size, 64, 1 << 20);
    return 0;
  }
  CheckAnswer(*answer);
  const std::optional<uint64_t> file_size = ImpliedSize(*answer);
  if (file_size && !answer->terms.empty()) {
    // As the answer for a range starting at offset_into_first_range: the first term then
    // starts at byte 0 of the file.
    const uint64_t first = answer->offset_into_first_range;
    auto block = xet::PlanBlock(*answer, xet::ByteSpan{first, first + *file_size - 1}, 1 << 20);
    if (block.ok()) {
      for (const auto& task : block->tasks) Check(task.bytes > 0, "an empty fetch task");
    } else {
      Check(block.status().code() == xet::Status::Code::kCorruption, "block plan rejection");
    }
    auto plan = xet::FilePlan::Build(*std::move(answer), *file_size);
    if (plan.ok()) {
      Check(plan->size() == *file_size, "file plan size");
      CheckFilePlan(*plan);
    } else {
      Check(plan.status().code() == xet::Status::Code::kCorruption, "file plan rejection");
    }
  }
  heap.Check("reconstruction_answer_fuzzer", size, 64, 1 << 20);
  return 0;
}
