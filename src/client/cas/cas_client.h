// CasClient: the Xet CAS API as the upload and download pipelines use it, with CAS tokens
// fetched from the Hub API and refreshed before they expire. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "client/cas/file_chunk_hashes_json.h"
#include "client/hub/hub_client.h"
#include "client/transport/http_client.h"
#include "common/result.h"
#include "format/hash.h"
#include "protocol/byte_range.h"

namespace xet {

// Supplies a valid CAS token. The implementation over HubClient caches the token and
// fetches a new one when less than `refresh_margin_s` of its life remains.
class CasTokenSource {
 public:
  virtual ~CasTokenSource() = default;
  virtual Result<XetToken> Token() = 0;
  // Forces the next Token() to fetch a fresh one (after a 401 from the CAS).
  virtual void Invalidate() = 0;
};

std::unique_ptr<CasTokenSource> MakeHubTokenSource(HubClient& hub, std::string bucket_id,
                                                   bool write, int64_t refresh_margin_s = 60);

// The caching source over any way of fetching a token (MakeHubTokenSource is this over
// HubClient::GetXetToken). A cached token is reused until less than `refresh_margin_s`
// (capped at half the token's lifetime, so short-lived tokens are still reused) remains
// before its expiry. `now` (unix seconds) defaults to the system clock. Thread-safe; a fetch
// happens under the source's lock, so concurrent callers wait for one fetch.
using TokenFetcher = std::function<Result<XetToken>()>;
std::unique_ptr<CasTokenSource> MakeCachingTokenSource(TokenFetcher fetch,
                                                       int64_t refresh_margin_s = 60,
                                                       std::function<int64_t()> now = {});

// A fixed token, never refreshed (a user token used directly against a CAS server).
std::unique_ptr<CasTokenSource> MakeStaticTokenSource(XetToken token);

// One fetch entry of a /v2/reconstructions answer: a URL and the ranges it covers.
struct FetchRange {
  uint32_t chunk_start = 0, chunk_end = 0;  // [start, end) chunk indices in the xorb
  uint64_t byte_start = 0, byte_end = 0;    // inclusive byte range in the xorb object
  // With chunk detail (GetReconstruction's `chunk_detail`): the byte offset in the xorb
  // object where each chunk of [chunk_start, chunk_end) starts, then the offset one past
  // the last one (chunk_end - chunk_start + 1 values), so any run of its chunks is a
  // sub-range a signed URL serves. Empty otherwise.
  std::vector<uint64_t> chunk_offsets = {};  // "= {}": aggregate inits may omit it
};
struct FetchEntry {
  std::string url;
  std::vector<FetchRange> ranges;
};
struct ReconTerm {
  Hash xorb_hash;
  uint32_t chunk_start = 0, chunk_end = 0;
  uint64_t unpacked_length = 0;
  // With chunk detail: the uncompressed length of each chunk of [chunk_start, chunk_end).
  std::vector<uint32_t> chunk_lengths = {};
};
struct Reconstruction {
  uint64_t offset_into_first_range = 0;
  std::vector<ReconTerm> terms;
  // xorb hash -> its fetch entries (ascending ranges)
  std::vector<std::pair<Hash, std::vector<FetchEntry>>> xorbs;
};

class CasClient {
 public:
  // Both must outlive the client.
  CasClient(HttpClient& http, CasTokenSource& tokens);

  // POST /v1/xorbs/default/{hash}; returns whether the server inserted it (false: it had
  // it already). 401 → one token refresh and retry.
  Result<bool> UploadXorb(const Hash& xorb_hash, std::span<const uint8_t> serialized);
  // HEAD /v1/xorbs/default/{hash}: whether the server has the xorb and this token's scope
  // can see it (false on 404), i.e. whether a shard may reference it.
  Result<bool> XorbExists(const Hash& xorb_hash);
  // POST /v1/shards (upload form, no footer); returns whether it was newly registered.
  Result<bool> UploadShard(std::span<const uint8_t> shard);
  // GET /v1/chunks/default-merkledb/{hash}: the dedup shard bytes, or nullopt on 404.
  Result<std::optional<std::vector<uint8_t>>> QueryChunk(const Hash& chunk_hash);
  // GET /v2/reconstructions/{file}, optionally for bytes [first, last] of the file.
  // NotFound when the file is unknown or invisible; OutOfRange on 416.
  // `chunk_detail` asks a xetstore server for FetchRange::chunk_offsets and
  // ReconTerm::chunk_lengths (xetstore extension, query `chunk_detail=1`; a server without
  // it leaves them empty).
  Result<Reconstruction> GetReconstruction(const Hash& file_hash,
                                           std::optional<std::pair<uint64_t, uint64_t>> range,
                                           bool chunk_detail = false);
  // GET /v2/file-chunk-hashes/{file} with X-Range-Dirty: the windows to re-chunk and the
  // summaries of the unchanged gaps for rewriting `dirty` (inclusive, ascending, disjoint
  // ranges inside the file) of a file of `file_size` bytes (client/cas/file_chunk_hashes_json.h).
  // NotFound when the file is unknown or invisible, or the server lacks the route;
  // Corruption when the answer is malformed or inconsistent.
  Result<FileChunkHashesAnswer> GetFileChunkHashes(const Hash& file_hash, uint64_t file_size,
                                                   std::span<const ByteRange> dirty);
  // GETs `entry.url` for ranges [first_range, last_range] of it (one multi-range request,
  // or a single range), delivering each range's bytes in order to `on_range(i, bytes)` as
  // the answer streams in (memory: about one range, more only if a server reorders parts).
  // Accepts a multipart/byteranges answer (parts in any order, coalesced parts allowed;
  // each part's Content-Range is checked), a single 206 whose Content-Range covers the
  // ranges, or a 200 with the whole object. Signed URLs need no token.
  // InvalidArgument for bad indices; Corruption when the answer is malformed, a part's
  // length differs from its Content-Range, or a requested range is missing; PermissionDenied
  // when the URL is refused (e.g. expired: get a fresh reconstruction); an error returned by
  // `on_range` is returned as is. A retried transfer does not deliver a range twice.
  // `buffer`, when given, holds the answer (a single-range or whole body, or the current
  // part of a multipart one) instead of memory allocated per call: a caller that fetches
  // repeatedly passes the same vector so its pages are faulted in once (its capacity grows
  // to the largest answer and is kept; its contents are unspecified afterwards).
  Status FetchRanges(const FetchEntry& entry, size_t first_range, size_t last_range,
                     const std::function<Status(size_t, std::span<const uint8_t>)>& on_range,
                     std::vector<uint8_t>* buffer = nullptr);
  // GETs range `range` of `entry` alone (a single-range request) and hands its bytes to
  // `on_bytes` in order, in pieces as they arrive: nothing is buffered beyond libcurl's
  // receive buffer. Accepts a 206 whose Content-Range covers the range or a 200 with the
  // whole object (bytes outside the range are skipped). A restarted transfer skips the bytes
  // already delivered. Errors as FetchRanges (Corruption when the answer ends early).
  Status StreamRange(const FetchEntry& entry, size_t range,
                     const std::function<Status(std::span<const uint8_t>)>& on_bytes);

 private:
  HttpClient& http_;
  CasTokenSource& tokens_;
};

}  // namespace xet
