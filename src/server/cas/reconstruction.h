// Reconstruction planning and the JSON bodies of the reconstruction routes. Pure: no I/O.
//
// PlanReconstruction turns a file's terms into what a client must fetch, optionally for a
// byte range of the file; the serializers write the three response shapes:
//   GET  /v2/reconstructions/{file}  SerializeReconstructionV2  (terms + xorbs)
//   GET  /v1/reconstructions/{file}  SerializeReconstructionV1  (terms + fetch_info)
//   POST /v1/reconstructions         SerializeBatchReconstruction (files + fetch_info)
// The bodies are written by hand, into one pre-sized string or streamed in pieces: a
// 100,000-term file is the common large case and must serialize in a few milliseconds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "format/hash.h"
#include "protocol/byte_range.h"
#include "server/transfer/transfer_signer.h"
#include "store/index_records.h"

namespace xet {

// Returns the chunk table of a xorb, or nullptr when the xorb is unknown. Pointers must stay
// valid until PlanReconstruction returns (back it with a cache of shared, read-only
// records, held alive by the closure). Called once per distinct xorb the plan touches.
using XorbLookup = std::function<const XorbRecord*(const Hash&)>;

// One term of the answer: chunks [chunk_start, chunk_end) of plan.xorbs[xorb_index].
struct ReconstructionTerm {
  uint32_t xorb_index = 0;
  uint32_t chunk_start = 0;
  uint32_t chunk_end = 0;
  uint32_t unpacked_length = 0;  // decompressed bytes of those chunks
  // Where those chunks lie in the serialized xorb, inclusive (as in XorbFetchRange::bytes).
  uint32_t bytes_first = 0;
  uint32_t bytes_last = 0;
  friend bool operator==(const ReconstructionTerm&, const ReconstructionTerm&) = default;
};

// A run of chunks to fetch from one xorb and the serialized bytes holding them.
struct XorbFetchRange {
  uint32_t chunk_start = 0;  // [chunk_start, chunk_end)
  uint32_t chunk_end = 0;
  ByteRange bytes;  // inclusive: [compressed_end[start-1], compressed_end[end-1] - 1]
  friend bool operator==(const XorbFetchRange&, const XorbFetchRange&) = default;
};

struct XorbFetchPlan {
  Hash hash;
  // The chunk ranges of every term naming this xorb, sorted, with overlapping or adjacent
  // ranges merged.
  std::vector<XorbFetchRange> ranges;
  friend bool operator==(const XorbFetchPlan&, const XorbFetchPlan&) = default;
};

struct ReconstructionPlan {
  uint64_t offset_into_first_range = 0;  // bytes to skip in the first term's output
  std::vector<ReconstructionTerm> terms;
  std::vector<XorbFetchPlan> xorbs;  // distinct xorbs, in order of first use by the terms
  // Chunk detail (xetstore extension; AddChunkDetail sets it, the v2 serializers write it).
  bool chunk_detail = false;
  // The decompressed length of each chunk of each term: term i's chunk_end - chunk_start
  // values follow term i-1's.
  std::vector<uint32_t> chunk_lengths;
  // Per xorb (indexed as `xorbs`), for each of its ranges in order: the object offset of
  // each chunk's start, then the range's end (chunk_end - chunk_start + 1 values).
  std::vector<std::vector<uint64_t>> chunk_offsets;
  friend bool operator==(const ReconstructionPlan&, const ReconstructionPlan&) = default;
};

// Plans the reconstruction of `file`, or of the bytes `range` of it (inclusive; last may
// be kOpenEnd or past the end of the file, which clamps to the file's end).
// Errors:
//   OutOfRange  range->first >= file size (the route answers 416). An empty file with a
//               range starting at 0 plans to no terms, as xet-core's server does.
//   Corruption  a term names an unknown xorb, a chunk range outside the xorb's table, an
//               empty range, or an unpacked size that disagrees with the table; or the
//               terms do not add up to file.size.
//   InvalidArgument  range->last < range->first.
Result<ReconstructionPlan> PlanReconstruction(const FileRecord& file, const XorbLookup& lookup,
                                              std::optional<ByteRange> range);

// Fills `plan`'s chunk detail from the xorbs' chunk tables (one lookup per xorb of the plan).
// Corruption if a xorb is unknown or a term or range lies outside its table.
Status AddChunkDetail(ReconstructionPlan* plan, const XorbLookup& lookup);

// The plan of a whole file, kept to answer any range of it (file records and xorbs never
// change once registered): SlicePlan cuts a range's plan from it without re-reading the
// chunk table of every term.
struct WholeFilePlan {
  ReconstructionPlan plan;          // PlanReconstruction(file, lookup, nullopt)
  std::vector<uint64_t> term_ends;  // term_ends[i]: the file offset just past plan.terms[i]
  uint64_t size = 0;                // the file's size
};

// PlanReconstruction(file, lookup, std::nullopt), with the terms' end offsets. Its errors.
Result<WholeFilePlan> PlanWholeFile(const FileRecord& file, const XorbLookup& lookup);

// Exactly PlanReconstruction(file, lookup, range) for the file `whole` was planned from
// (same terms, xorb order, merged ranges, offset and errors), in time proportional to the
// terms in the range: only the (at most two) terms the range cuts are looked up.
Result<ReconstructionPlan> SlicePlan(const WholeFilePlan& whole, const XorbLookup& lookup,
                                     std::optional<ByteRange> range);

// The memory `whole` holds, for cache accounting.
size_t WholeFilePlanBytes(const WholeFilePlan& whole);

struct ReconstructionJsonOptions {
  // v2 only: a xorb whose merged ranges exceed this count gets several fetch entries, each
  // with its own URL (keeps URLs and Range headers within common 8 KiB header limits, as
  // the spec allows). 0 = one entry per xorb regardless. Must be <= kMaxByteRanges, or
  // the transfer route would refuse the URL.
  size_t max_ranges_per_fetch = 256;
};

// {"offset_into_first_range":N,"terms":[...],"xorbs":{"<xorb>":[{"url":..,"ranges":[
//   {"chunks":{"start":..,"end":..},"bytes":{"start":..,"end":..}},...]}]}}
// With plan.chunk_detail, each term also has "chunk_lengths":[..] and each range
// "chunk_offsets":[..] (see ReconstructionPlan).
std::string SerializeReconstructionV2(const ReconstructionPlan& plan, TransferUrlSigner& signer,
                                      const ReconstructionJsonOptions& options = {});

// {"offset_into_first_range":N,"terms":[...],"fetch_info":{"<xorb>":[{"range":{..},
//   "url":..,"url_range":{"start":..,"end":..}},...]}} — one single-range URL per entry.
std::string SerializeReconstructionV1(const ReconstructionPlan& plan, TransferUrlSigner& signer);

// Receives a streamed answer piece by piece, in order; returns false to stop the writer
// (the client is gone).
using ReconstructionSink = std::function<bool(std::string_view piece)>;

// The same bodies as SerializeReconstructionV2/V1, handed to `sink` in pieces of about
// `piece_bytes` instead of built whole: a large answer is sent while it is written, in
// constant memory. Returns false if the sink stopped the writer.
bool StreamReconstructionV2(const ReconstructionPlan& plan, TransferUrlSigner& signer,
                            const ReconstructionJsonOptions& options,
                            const ReconstructionSink& sink, size_t piece_bytes);
bool StreamReconstructionV1(const ReconstructionPlan& plan, TransferUrlSigner& signer,
                            const ReconstructionSink& sink, size_t piece_bytes);

struct FileReconstruction {
  Hash file_hash;
  const ReconstructionPlan* plan = nullptr;  // a full-file plan
};

// {"files":{"<file>":[terms...]},"fetch_info":{...}} for POST /v1/reconstructions.
// fetch_info is shared by the files: each xorb's ranges from all plans, merged. A file
// listed twice appears once.
std::string SerializeBatchReconstruction(std::span<const FileReconstruction> files,
                                         TransferUrlSigner& signer);

}  // namespace xet
