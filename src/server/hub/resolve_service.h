// ResolveService: GET|HEAD /buckets/{ns}/{name}/resolve/{*path}. Every answer carries the
// Xet headers (ETag, X-Xet-Hash, X-Linked-Size, X-Linked-ETag, Link rel="xet-auth" and
// rel="xet-reconstruction-info"). With Accept: application/vnd.xet-fileinfo+json the body
// is the small file-info document (Range is ignored: the JS client sends bytes=0-0 and
// reads X-Linked-Size); otherwise the file's bytes, reconstructed on the server
// (server/transfer/file_reader.h) and streamed under their exact Content-Length, with
// single-range support. A missing entry answers 404 with X-Error-Code: EntryNotFound.
#pragma once

#include <cstddef>

#include "http/message.h"
#include "server/cache/xorb_record_cache.h"
#include "server/hub/bucket_gate.h"
#include "server/hub/public_base_url.h"
#include "store/index.h"
#include "store/object_store.h"

namespace xet {

class ResolveService {
 public:
  // Chunk tables of up to `xorb_cache_bytes` are cached for the reads. All references must
  // outlive the service and every stream it answers with. Thread-safe.
  ResolveService(size_t xorb_cache_bytes, Index& index, ObjectStore& objects,
                 const BucketGate& gate, const PublicBaseUrl& public_url);

  HttpResponse Resolve(const HttpRequest& req, const RouteParams& params);

 private:
  Index& index_;
  ObjectStore& objects_;
  const BucketGate& gate_;
  const PublicBaseUrl& public_url_;
  XorbRecordCache xorb_cache_;
};

}  // namespace xet
