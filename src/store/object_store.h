// ObjectStore: immutable, content-addressed blobs (stored xorbs with footer, shards).
//
// Contract for every implementation (local directory now, S3-compatible later):
// - An object appears under its final key whole or not at all: a crash at any point never
//   leaves a partial object visible under its final name.
// - A finished object is never overwritten: Put on an existing key leaves it untouched and
//   reports that it existed (content addressing makes the bytes identical anyway).
// - Put returns only after the object is durable (local: file and directory fsynced).
// - A Put leaves nothing behind but its object: one that fails (or finds the object there)
//   leaves no temporary file and no partial object. A full disk or quota fails it with
//   InsufficientStorage, other storage failures with IoError; once space is freed the same
//   Put succeeds.
// - Thread-safe: any number of threads may call any method concurrently; of concurrent
//   Puts of one key exactly one creates the object.
// - A key that only prefixes other keys ("xorbs" of "xorbs/ab/...") names no object.
// Keys are relative paths of [0-9a-z_./-] characters without ".." segments, e.g.
// "xorbs/ab/<hash hex>" (see XorbKey/ShardKey); others are rejected with InvalidArgument.
// Every backend passes the contract suite of tests/store/object_store_contract.h.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"
#include "format/hash.h"

namespace xet {

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  // Stores `data` under `key` unless an object already exists there. Returns true when this
  // call created the object, false when it already existed (nothing written). After a
  // Delete the key can be stored again.
  virtual Result<bool> Put(std::string_view key, std::span<const uint8_t> data) = 0;

  // Put of the concatenation of `parts`: for objects assembled from pieces (a xorb body and
  // the footer built for it) without first joining them in memory. The default joins them
  // and calls Put; stores override it to write the pieces directly.
  virtual Result<bool> PutParts(std::string_view key,
                                std::span<const std::span<const uint8_t>> parts);

  // Size in bytes of the object; NotFound if absent.
  virtual Result<uint64_t> Size(std::string_view key) = 0;

  // Reads out.size() bytes starting at `offset` into `out`. NotFound if absent,
  // OutOfRange if [offset, offset + out.size()) is not inside the object (an empty read at
  // the object's end is inside, one past it is not; offsets near UINT64_MAX do not wrap).
  virtual Status ReadRange(std::string_view key, uint64_t offset, std::span<uint8_t> out) = 0;

  // The whole object; NotFound if absent.
  virtual Result<std::vector<uint8_t>> Get(std::string_view key) = 0;

  // The object opened for reading, for stores that keep objects as local files (the server
  // then sends ranges of it with sendfile(2)). Objects are immutable, so the descriptor
  // reads the object's bytes for as long as it is held, even if the object is deleted
  // meanwhile. NotFound if absent; Unimplemented (the default) for stores without files.
  virtual Result<UniqueFd> OpenFile(std::string_view key);

  // Removes the object; OK if it was already absent.
  virtual Status Delete(std::string_view key) = 0;

  // Calls `visit` with the key and size of every object whose key starts with `prefix`
  // ("" = every object), in no particular order, and stops at the first error `visit`
  // returns (which List returns). Objects stored or deleted while the listing runs may or
  // may not be visited; nothing else the store keeps (temporary files, unfinished uploads)
  // is. For the operator's tools (gc, fsck), not the request paths.
  virtual Status List(std::string_view prefix,
                      const std::function<Status(std::string_view key, uint64_t size)>& visit) = 0;
};

// OK if `key` is a valid object key: non-empty, relative, '/'-separated segments of
// [0-9a-z_.-] characters, no empty segment and no segment starting with '.' (which also
// excludes "." and ".."; dot-names are reserved for the stores' own temporary files).
// InvalidArgument naming the key otherwise. Every ObjectStore method checks its key.
Status ValidateObjectKey(std::string_view key);

// "xorbs/<first 2 hex chars>/<xorb hash hex>"
std::string XorbKey(const Hash& xorb_hash);
// "shards/<shard hash hex>"
std::string ShardKey(const Hash& shard_hash);

// The embedded default: objects as files under `root` (created if missing). Writes go to a
// temporary file in the same directory, are fsynced, renamed into place and the directory
// is fsynced. Leftover temporary files from a crash are removed when the store is opened.
Result<std::unique_ptr<ObjectStore>> OpenLocalObjectStore(const std::string& root);

}  // namespace xet
