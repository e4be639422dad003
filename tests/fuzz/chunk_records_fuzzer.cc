// libFuzzer target: the checks a download applies to the chunk records of a fetched xorb
// range (client/download/chunk_records.h) before and while decompressing them. The bytes
// come from the server (or the local chunk cache) and are untrusted.
//
// Input: one byte giving the number of chunks the range should hold (its value modulo 16),
// then the range's bytes.
// Properties:
//   - nothing crashes or throws; a refused range is Corruption with a message;
//   - the range held whole (ParseChunkRecords) and the same bytes arriving in pieces
//     (ChunkRecordStream, fed whole, in pieces of varying size and byte by byte) agree: the
//     same records with the same payloads, accepted or refused alike;
//   - an accepted record is what the header promises: exactly num_chunks of them fill the
//     range, each uncompressed size in (0, kXorbMaxChunkSize], a stored chunk's sizes equal;
//   - decoding a record gives exactly its uncompressed size (a stored chunk: its payload
//     itself), or Corruption;
//   - heap growth stays linear in the input.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "client/download/chunk_records.h"
#include "format/compression.h"
#include "format/xorb_limits.h"
#include "fuzz/support/arrivals.h"
#include "fuzz/support/heap_meter.h"
#include "fuzz/support/property_check.h"

namespace {

constexpr xet::fuzz::PropertyCheck Check("chunk_records_fuzzer");

struct Record {
  uint32_t index, csize, usize;
  uint8_t scheme;
  std::string payload;
  bool operator==(const Record&) const = default;
};

struct Outcome {
  bool ok = true;
  std::vector<Record> records;
  bool operator==(const Outcome&) const = default;
};

Outcome Stream(std::span<const uint8_t> range, uint32_t num_chunks,
               const xet::fuzz::Arrival& arrival) {
  xet::ChunkRecordStream stream;
  stream.Reset(num_chunks, range.size());
  Outcome out;
  const xet::ChunkRecordStream::RecordFn on_record = [&](uint32_t index, const xet::ChunkRecord& r,
                                                         std::span<const uint8_t> payload) {
    Check(payload.size() == r.csize, "a payload shorter or longer than its header says");
    out.records.push_back(
        Record{index, r.csize, r.usize, r.scheme, std::string(payload.begin(), payload.end())});
    return xet::Status::Ok();
  };
  xet::fuzz::FeedInPieces(range, arrival, [&](std::span<const uint8_t> piece) {
    out.ok = !Check.Refused(stream.Feed(piece, on_record), xet::Status::Code::kCorruption);
    return out.ok;
  });
  if (!out.ok) return out;
  out.ok = !Check.Refused(stream.Finish(), xet::Status::Code::kCorruption);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint32_t num_chunks = data[0] % 16;
  const std::span<const uint8_t> range(data + 1, size - 1);
  xet::fuzz::HeapScope heap;

  std::vector<xet::ChunkRecord> parsed;
  const xet::Status whole = xet::ParseChunkRecords(range, num_chunks, &parsed);
  Outcome expected;
  if (Check.Refused(whole, xet::Status::Code::kCorruption)) {
    expected.ok = false;
  } else {
    Check(parsed.size() == num_chunks, "not exactly num_chunks records");
    xet::ChunkCodec codec;
    std::vector<uint8_t> scratch(xet::kXorbMaxChunkSize);
    size_t end = 0;
    for (uint32_t i = 0; i < parsed.size(); ++i) {
      const xet::ChunkRecord& r = parsed[i];
      Check(r.payload == end + xet::kXorbChunkHeaderSize, "records not back to back");
      Check(r.usize > 0 && r.usize <= xet::kXorbMaxChunkSize, "uncompressed size out of range");
      Check(r.scheme != static_cast<uint8_t>(xet::CompressionScheme::kNone) || r.csize == r.usize,
            "a stored chunk whose sizes differ");
      end = r.payload + r.csize;
      Check(end <= range.size(), "a record past the range");
      const auto payload = range.subspan(r.payload, r.csize);
      expected.records.push_back(
          Record{i, r.csize, r.usize, r.scheme, std::string(payload.begin(), payload.end())});
      auto decoded = xet::DecodeChunkRecord(codec, i, r, payload, scratch);
      if (!decoded.ok()) {
        Check.Refusal(decoded.status(), xet::Status::Code::kCorruption);
        continue;
      }
      Check(decoded->size() == r.usize, "decoded to a size other than the header's");
      if (r.scheme == static_cast<uint8_t>(xet::CompressionScheme::kNone)) {
        Check(decoded->data() == payload.data(), "a stored chunk not handed out in place");
      }
    }
    Check(end == range.size(), "records do not fill the range");
  }

  // The stream hands out records as they complete; a refused range may have completed some
  // before the refusal, so only accepted ranges are compared record by record.
  for (const xet::fuzz::Arrival& arrival : xet::fuzz::Arrivals(range, 251)) {
    const Outcome got = Stream(range, num_chunks, arrival);
    Check(got.ok == expected.ok, "the stream and the whole range disagree on acceptance");
    if (got.ok) Check(got == expected, "the stream hands out other records");
  }
  heap.Check("chunk_records_fuzzer", size, 64, 4 << 20);
  return 0;
}
