// The --sha256 flag of the uploading commands (cp, sync).
#pragma once

#include <CLI/CLI.hpp>

namespace xet::cli {

// Adds --sha256 to `cmd`, bound to `record_sha256` (BucketUploadOptions::record_sha256 of
// client/bucket_transfer/bucket_upload.h).
void AddSha256Flag(CLI::App* cmd, bool* record_sha256);

}  // namespace xet::cli
