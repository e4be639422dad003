// Decorators for a node serving reads only (`xetstore serve --read-only`, e.g. while
// `xetstore migrate` copies what changed last before a cut-over): every read is forwarded;
// every write (an object stored or deleted, a row added, changed or removed) is refused
// with ReadOnlyRefusal() before it reaches the store, which clients see as 503 with that
// one-line message. Nothing the node does at start (the admin token) goes through them.
#pragma once

#include <memory>

#include "common/status.h"
#include "store/index.h"
#include "store/object_store.h"

namespace xet {

// Unavailable("this server is read-only (maintenance); retry later").
Status ReadOnlyRefusal();
bool IsReadOnlyRefusal(const Status& status);

// `inner` must outlive the returned objects.
std::unique_ptr<Index> ReadOnlyIndex(Index& inner);
std::unique_ptr<ObjectStore> ReadOnlyObjectStore(ObjectStore& inner);

}  // namespace xet
