#include "server/hub/resolve_service.h"

#include <stdexcept>
#include <string>

#include "protocol/bucket_path.h"
#include "protocol/byte_range.h"
#include "server/http_status.h"
#include "server/hub/bucket_json.h"
#include "server/hub/hub_urls.h"
#include "server/transfer/file_reader.h"

namespace xet {
namespace {

constexpr std::string_view kFileInfoType = "application/vnd.xet-fileinfo+json";

// The byte range to send from a file of `size` bytes: nullopt for the whole file (no Range,
// or several ranges, which may be ignored per RFC 9110), OutOfRange when unsatisfiable,
// InvalidArgument when malformed. Accepts `FIRST-LAST`, `FIRST-` and the suffix form `-N`.
Result<std::optional<ByteRange>> RequestedRange(std::optional<std::string_view> header,
                                                uint64_t size) {
  using Answer = std::optional<ByteRange>;
  if (!header) return Answer();
  std::string_view h = *header;
  constexpr std::string_view kUnit = "bytes=";
  if (h.size() > kUnit.size() && h.substr(0, kUnit.size()) == kUnit && h[kUnit.size()] == '-') {
    const std::string_view digits = h.substr(kUnit.size() + 1);
    if (digits.empty() || digits.size() > 19 ||
        digits.find_first_not_of("0123456789") != std::string_view::npos) {
      return Status::InvalidArgument("malformed suffix range");
    }
    const uint64_t n = std::stoull(std::string(digits));
    if (n == 0 || size == 0) return Status::OutOfRange("empty suffix range");
    return Answer(ByteRange{n >= size ? 0 : size - n, size - 1});
  }
  XET_ASSIGN_OR_RETURN(auto ranges, ParseByteRanges(h, {.allow_open_end = true}));
  if (ranges.size() != 1) return Answer();
  ByteRange r = ranges[0];
  if (r.first >= size) return Status::OutOfRange("range starts past the end of the file");
  if (r.last >= size) r.last = size - 1;
  return Answer(r);
}

HttpResponse EntryNotFound(std::string_view path) {
  HttpResponse res = HttpResponse::Error(404, "entry '" + std::string(path) + "' not found");
  res.headers.Set("X-Error-Code", "EntryNotFound");
  return res;
}

}  // namespace

ResolveService::ResolveService(size_t xorb_cache_bytes, Index& index, ObjectStore& objects,
                               const BucketGate& gate, const PublicBaseUrl& public_url)
    : index_(index),
      objects_(objects),
      gate_(gate),
      public_url_(public_url),
      xorb_cache_(index, xorb_cache_bytes) {}

HttpResponse ResolveService::Resolve(const HttpRequest& req, const RouteParams& params) {
  auto caller = gate_.Caller(req);
  if (!caller.ok()) return ErrorResponse(caller.status());
  auto bucket = gate_.ReadableBucket(*caller, params);
  if (!bucket.ok()) return BucketErrorResponse(bucket.status());
  const std::string& path = params.at("path");
  if (Status st = ValidateBucketPath(path); !st.ok()) return ErrorResponse(st);
  auto entry = index_.GetBucketEntry(bucket->ns, bucket->name, path);
  if (!entry.ok()) return BucketErrorResponse(entry.status());
  if (!*entry || (*entry)->is_directory) return EntryNotFound(path);  // directories have no bytes

  const std::string public_url = public_url_.Get();
  const std::string hash = (*entry)->file_hash.ToHex();
  const std::string etag = "\"" + hash + "\"";
  const std::string refresh_url = XetReadTokenUrl(public_url, bucket->FullName());
  const std::string recon_url = ReconstructionInfoUrl(public_url, (*entry)->file_hash);
  HttpResponse res;
  res.headers.Set("ETag", etag);
  res.headers.Set("X-Xet-Hash", hash);
  res.headers.Set("X-Linked-Size", std::to_string((*entry)->size));
  res.headers.Set("X-Linked-ETag", etag);
  res.headers.Set("Accept-Ranges", "bytes");
  res.headers.Set("Link", "<" + refresh_url + ">; rel=\"xet-auth\", <" + recon_url +
                              ">; rel=\"xet-reconstruction-info\"");

  if (req.headers.Get("accept").value_or("").find(kFileInfoType) != std::string_view::npos) {
    res.headers.Set("Content-Type", std::string(kFileInfoType));
    res.body = XetFileInfoJson(**entry, refresh_url, recon_url);
    return res;
  }

  // The empty file needs no record (a symbolic link's entry points at it unregistered).
  auto file = (*entry)->file_hash.IsZero()
                  ? Result<std::optional<FileRecord>>(std::optional<FileRecord>(FileRecord{}))
                  : index_.GetFile((*entry)->file_hash);
  if (!file.ok()) return ErrorResponse(file.status());
  if (!*file) return ErrorResponse(Status::Internal("bucket entry names an unknown file"));
  const uint64_t size = (*file)->size;
  auto range = RequestedRange(req.headers.Get("range"), size);
  if (!range.ok()) {
    if (range.status().code() != Status::Code::kOutOfRange) {
      return HttpResponse::Error(400, "bad Range header: " + range.status().message());
    }
    HttpResponse err = HttpResponse::Error(416, range.status().message());
    err.headers.Set("Content-Range", "bytes */" + std::to_string(size));
    return err;
  }
  res.headers.Set("Content-Type", (*entry)->content_type.empty() ? "application/octet-stream"
                                                                 : (*entry)->content_type);
  ByteRange send{0, size == 0 ? 0 : size - 1};
  if (*range) {
    send = **range;
    res.status = 206;
    res.headers.Set("Content-Range", "bytes " + std::to_string(send.first) + "-" +
                                         std::to_string(send.last) + "/" + std::to_string(size));
  }
  res.content_length = size == 0 ? 0 : send.size();
  if (req.method == "HEAD" || size == 0) return res;
  // The stream runs after this handler returns: it owns its copy of the file record.
  res.stream = [this, f = std::move(**file), send](const auto& write) {
    const Status st = ReadFileRange(f, send.first, send.last, xorb_cache_, objects_, write);
    // The server layer records a producer's exception in the access log and closes the
    // connection, so the client sees a truncated body rather than a wrong one.
    if (!st.ok()) throw std::runtime_error("resolve stream failed: " + st.ToString());
  };
  return res;
}

}  // namespace xet
