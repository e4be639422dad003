// S3ObjectStore: the ObjectStore contract over a bucket of an S3-compatible server.
//
// Objects are stored at PREFIX/KEY (S3Options), signed by libcurl's SigV4 (S3Client), with
// retries on transient failures.
//   - Put: a HEAD first (an existing object is left alone: false); then one PUT with
//     `If-None-Match: *` (a server that honours it answers 412 when another writer won the
//     race: false), or, above options.multipart_threshold bytes, a multipart upload of
//     options.part_size parts that is aborted on any failure, so no unfinished upload is
//     left behind. An object appears whole when its PUT or CompleteMultipartUpload
//     succeeds, and S3 answers those only once the object is durable.
//   - Concurrent Puts of one key through one store are serialized, so exactly one of them
//     reports creating it. Across processes (several nodes) that holds only where the
//     server honours If-None-Match (AWS S3 since 2024, MinIO, Ceph); elsewhere two nodes
//     may both store the same content-addressed bytes and both report true, which is
//     harmless: the bytes are identical.
//   - ReadRange is one ranged GET written straight into the caller's buffer; Get collects
//     the body (bounded by what arrives, never by a declared length).
//   - OpenFile is Unimplemented (the server streams ranges instead of sendfile).
//   - Errors: S3Failure's mapping (404 NotFound, 403 PermissionDenied, quota errors
//     InsufficientStorage, exhausted retries Unavailable, others IoError).
#pragma once

#include <memory>

#include "common/result.h"
#include "store/object_store.h"
#include "store/s3/s3_options.h"

namespace xet {

// Checks that the bucket is reachable with these credentials (one ListObjectsV2 of at most
// one key under the prefix), so a wrong endpoint, bucket or key fails at startup.
Result<std::unique_ptr<ObjectStore>> OpenS3ObjectStore(S3Options options);

}  // namespace xet
