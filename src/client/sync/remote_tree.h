// Listing a bucket prefix for sync: every file under it, with size, mtime and Xet hash,
// from the paginated recursive tree listing (one request per 1,000 entries; no per-file
// requests).
#pragma once

#include <string>
#include <vector>

#include "client/hub/hub_client.h"
#include "client/sync/sync_plan.h"
#include "common/result.h"

namespace xet {

// The files under `prefix` ("" = the whole bucket; a directory prefix: "a/b" lists
// "a/b/..." but not "a/bc" nor a file named "a/b") with paths relative to it, in no
// particular order. The listing's errors are returned as is (NotFound for an unknown or
// unreadable bucket).
Result<std::vector<SyncFile>> ListRemoteTree(HubClient& hub, const std::string& bucket_id,
                                             const std::string& prefix);

}  // namespace xet
