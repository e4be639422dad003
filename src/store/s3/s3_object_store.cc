#include "store/s3/s3_object_store.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "store/s3/s3_client.h"
#include "store/s3/s3_xml.h"

namespace xet {
namespace {

using Parts = std::span<const std::span<const uint8_t>>;

// Largest object Get collects (S3's single-object limit is 5 TiB; the store's objects are
// xorbs and shards, far smaller).
constexpr size_t kMaxGetBytes = size_t{4} << 30;

// Serializes the callers that hold one key; other keys proceed in parallel.
class KeyLocks {
 public:
  class Guard {
   public:
    Guard(KeyLocks& locks, std::string key) : locks_(locks), key_(std::move(key)) {
      MutexLock lock(locks_.mu_);
      Slot& slot = locks_.slots_[key_];
      ++slot.users;
      while (slot.held) locks_.cv_.Wait(locks_.mu_);
      slot.held = true;
    }
    ~Guard() {
      {
        MutexLock lock(locks_.mu_);
        auto it = locks_.slots_.find(key_);
        it->second.held = false;
        if (--it->second.users == 0) locks_.slots_.erase(it);
      }
      locks_.cv_.NotifyAll();
    }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    KeyLocks& locks_;
    const std::string key_;
  };

 private:
  struct Slot {
    int users = 0;
    bool held = false;
  };
  Mutex mu_;
  CondVar cv_;
  std::unordered_map<std::string, Slot> slots_ GUARDED_BY(mu_);
};

// The pieces of `parts` that make bytes [from, from + n) of their concatenation.
std::vector<std::span<const uint8_t>> Slice(Parts parts, uint64_t from, uint64_t n) {
  std::vector<std::span<const uint8_t>> out;
  uint64_t at = 0;
  for (const auto& p : parts) {
    const uint64_t lo = std::max(at, from), hi = std::min(at + p.size(), from + n);
    if (lo < hi) out.push_back(p.subspan(lo - at, hi - lo));
    at += p.size();
  }
  return out;
}

class S3ObjectStore final : public ObjectStore {
 public:
  explicit S3ObjectStore(S3Options options) : client_(std::move(options)) {}

  Status Probe() {
    S3Request req;
    req.query = "list-type=2&max-keys=1";
    if (!client_.options().prefix.empty()) {
      req.query += "&prefix=" + S3UriEncode(client_.options().prefix + "/", false);
    }
    XET_ASSIGN_OR_RETURN(S3Response r, client_.Send(req));
    if (r.status != 200) return S3Failure(r, "listing bucket " + client_.options().bucket);
    return ParseListObjectsV2(r.text).status();
  }

  Result<bool> Put(std::string_view key, std::span<const uint8_t> data) override {
    const std::span<const uint8_t> parts[] = {data};
    return PutParts(key, parts);
  }

  Result<bool> PutParts(std::string_view key, Parts parts) override {
    XET_RETURN_IF_ERROR(ValidateObjectKey(key));
    const std::string object = client_.ObjectKey(key);
    KeyLocks::Guard guard(locks_, object);
    uint64_t total = 0;
    for (const auto& p : parts) total += p.size();
    XET_ASSIGN_OR_RETURN(std::optional<uint64_t> existing, ExistingSize(object));
    // An object of another size under a content-addressed key is a torn write: S3 itself
    // never shows one, but stores that write a PUT's body as it arrives (s3rver) keep what
    // a writer killed mid-body sent. It is replaced whole.
    const bool torn = existing && *existing != total;
    if (existing && !torn) return false;
    if (total > client_.options().multipart_threshold) return PutMultipart(object, parts, total);
    S3Request req;
    req.method = "PUT";
    req.object_key = object;
    req.body = parts;
    if (!torn) req.headers.push_back("If-None-Match: *");
    XET_ASSIGN_OR_RETURN(S3Response r, client_.Send(req));
    if (r.status == 412) return false;  // another writer created it first
    if (r.status != 200) return S3Failure(r, "PUT " + object);
    return true;
  }

  Result<uint64_t> Size(std::string_view key) override {
    XET_RETURN_IF_ERROR(ValidateObjectKey(key));
    const std::string object = client_.ObjectKey(key);
    XET_ASSIGN_OR_RETURN(S3Response r, SendBodiless("HEAD", object));
    if (r.status != 200) return S3Failure(r, "HEAD " + object);
    if (!r.content_length) return Status::IoError("S3 HEAD " + object + ": no Content-Length");
    return *r.content_length;
  }

  Status ReadRange(std::string_view key, uint64_t offset, std::span<uint8_t> out) override {
    XET_RETURN_IF_ERROR(ValidateObjectKey(key));
    const std::string object = client_.ObjectKey(key);
    if (offset > UINT64_MAX - out.size()) {
      return Status::OutOfRange("range of " + object + " wraps around");
    }
    if (out.empty()) {
      XET_ASSIGN_OR_RETURN(uint64_t size, Size(key));
      if (offset > size) return Status::OutOfRange("offset past the end of " + object);
      return Status::Ok();
    }
    S3Request req;
    req.object_key = object;
    req.into = out;
    req.range_offset = offset;
    auto sent = client_.Send(req);
    if (!sent.ok()) {
      // More bytes than asked for: a server that ignored the Range and sent the whole
      // object of which the range is not the whole.
      if (sent.status().code() == Status::Code::kResourceExhausted) {
        return Status::IoError("S3 GET " + object + " ignored the byte range");
      }
      return sent.status();
    }
    const S3Response& r = *sent;
    if (r.status == 416 || r.range_outside) return Status::OutOfRange("range outside " + object);
    if (r.status != 206 && r.status != 200) return S3Failure(r, "GET " + object);
    if (r.status == 200 && offset != 0) {
      return Status::IoError("S3 GET " + object + " ignored the byte range");
    }
    // S3 shortens a range that runs past the end: then it is not inside the object.
    if (r.body_bytes != out.size())
      return Status::OutOfRange("range runs past the end of " + object);
    return Status::Ok();
  }

  Result<std::vector<uint8_t>> Get(std::string_view key) override {
    XET_RETURN_IF_ERROR(ValidateObjectKey(key));
    const std::string object = client_.ObjectKey(key);
    S3Request req;
    req.object_key = object;
    req.max_text = kMaxGetBytes;
    XET_ASSIGN_OR_RETURN(S3Response r, client_.Send(req));
    if (r.status != 200) return S3Failure(r, "GET " + object);
    return std::vector<uint8_t>(r.text.begin(), r.text.end());
  }

  Status Delete(std::string_view key) override {
    XET_RETURN_IF_ERROR(ValidateObjectKey(key));
    const std::string object = client_.ObjectKey(key);
    XET_ASSIGN_OR_RETURN(S3Response r, SendBodiless("DELETE", object));
    if (r.status == 204 || r.status == 200 || r.status == 404) return Status::Ok();
    return S3Failure(r, "DELETE " + object);
  }

  Status List(std::string_view prefix,
              const std::function<Status(std::string_view key, uint64_t size)>& visit) override {
    const std::string& root = client_.options().prefix;
    const std::string full = root.empty() ? std::string(prefix) : root + "/" + std::string(prefix);
    std::string token;
    for (;;) {
      S3Request req;
      // Parameters in canonical (sorted) order.
      if (!token.empty()) req.query = "continuation-token=" + S3UriEncode(token, false) + "&";
      req.query += "list-type=2";
      if (!full.empty()) req.query += "&prefix=" + S3UriEncode(full, false);
      XET_ASSIGN_OR_RETURN(S3Response r, client_.Send(req));
      if (r.status != 200) return S3Failure(r, "listing " + full);
      XET_ASSIGN_OR_RETURN(S3ListPage page, ParseListObjectsV2(r.text));
      for (const S3ListPage::Object& o : page.objects) {
        if (!o.key.starts_with(full)) {
          return Status::Corruption("S3 listed '" + o.key + "' under prefix '" + full + "'");
        }
        std::string_view key(o.key);
        if (!root.empty()) key.remove_prefix(root.size() + 1);
        if (!ValidateObjectKey(key).ok()) continue;  // not one of the store's objects
        XET_RETURN_IF_ERROR(visit(key, o.size));
      }
      if (!page.truncated) return Status::Ok();
      token = std::move(page.next_token);
    }
  }

 private:
  // A request on `object` with no body, query or extra header (HEAD, DELETE).
  Result<S3Response> SendBodiless(const char* method, const std::string& object) {
    S3Request req;
    req.method = method;
    req.object_key = object;
    return client_.Send(req);
  }

  // The size of `object`, or nullopt if there is none.
  Result<std::optional<uint64_t>> ExistingSize(const std::string& object) {
    XET_ASSIGN_OR_RETURN(S3Response r, SendBodiless("HEAD", object));
    if (r.status == 404) return std::optional<uint64_t>();
    if (r.status != 200) return S3Failure(r, "HEAD " + object);
    if (!r.content_length) return Status::IoError("S3 HEAD " + object + ": no Content-Length");
    return std::optional<uint64_t>(*r.content_length);
  }

  Result<bool> PutMultipart(const std::string& object, Parts parts, uint64_t total) {
    S3Request start;
    start.method = "POST";
    start.object_key = object;
    start.query = "uploads=";
    XET_ASSIGN_OR_RETURN(S3Response started, client_.Send(start));
    if (started.status != 200) return S3Failure(started, "starting the upload of " + object);
    XET_ASSIGN_OR_RETURN(std::string upload_id, ParseInitiateMultipartUpload(started.text));
    Result<bool> done = UploadParts(object, upload_id, parts, total);
    if (!done.ok()) {
      // Best effort: an unfinished upload holds storage until aborted.
      S3Request abort;
      abort.method = "DELETE";
      abort.object_key = object;
      abort.query = "uploadId=" + S3UriEncode(upload_id, false);
      (void)client_.Send(abort);
    }
    return done;
  }

  Result<bool> UploadParts(const std::string& object, const std::string& upload_id, Parts parts,
                           uint64_t total) {
    const uint64_t part_size = std::max<uint64_t>(client_.options().part_size, 5u << 20);
    std::string complete = "<CompleteMultipartUpload>";
    int number = 1;
    for (uint64_t at = 0; at < total; at += part_size, ++number) {
      const auto slice = Slice(parts, at, std::min(part_size, total - at));
      S3Request req;
      req.method = "PUT";
      req.object_key = object;
      req.query =
          "partNumber=" + std::to_string(number) + "&uploadId=" + S3UriEncode(upload_id, false);
      req.body = slice;
      XET_ASSIGN_OR_RETURN(S3Response r, client_.Send(req));
      if (r.status != 200) return S3Failure(r, "uploading part of " + object);
      if (r.etag.empty())
        return Status::IoError("S3 part of " + object + " came back without an ETag");
      complete += "<Part><PartNumber>" + std::to_string(number) + "</PartNumber><ETag>" + r.etag +
                  "</ETag></Part>";
    }
    complete += "</CompleteMultipartUpload>";
    const std::span<const uint8_t> body[] = {
        {reinterpret_cast<const uint8_t*>(complete.data()), complete.size()}};
    S3Request req;
    req.method = "POST";
    req.object_key = object;
    req.query = "uploadId=" + S3UriEncode(upload_id, false);
    req.body = body;
    XET_ASSIGN_OR_RETURN(S3Response r, client_.Send(req));
    if (r.status != 200) return S3Failure(r, "completing the upload of " + object);
    bool completed = false;
    XET_ASSIGN_OR_RETURN(S3Error err, ParseCompleteMultipartUpload(r.text, &completed));
    if (!completed) {
      return Status::IoError("S3 completing the upload of " + object + " failed: " + err.code +
                             " " + err.message);
    }
    return true;
  }

  S3Client client_;
  KeyLocks locks_;
};

}  // namespace

Result<std::unique_ptr<ObjectStore>> OpenS3ObjectStore(S3Options options) {
  auto store = std::make_unique<S3ObjectStore>(std::move(options));
  XET_RETURN_IF_ERROR(store->Probe());
  return std::unique_ptr<ObjectStore>(std::move(store));
}

}  // namespace xet
