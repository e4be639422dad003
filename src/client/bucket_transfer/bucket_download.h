// Downloading bucket files to the local disk or to standard output, as `cp` (and `sync`)
// do. Each file is reconstructed by the Downloader into "<dest>.xetpart" and renamed over
// its destination only when complete and verified, so an interrupted or failed download
// never leaves a half-written destination file (the .xetpart resumes on the next run).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "client/bucket_transfer/remote_connection.h"
#include "client/hub/hub_client.h"
#include "client/transfer_stats.h"
#include "common/result.h"

namespace xet {

struct DownloadJob {
  RemoteEntry file;  // path, size and Xet hash, from a listing (mtime_ms too for keep_mtime)
  std::string local_path;
  // Set the downloaded file's modification time to file.mtime_ms (when known), as sync
  // does so that the next sync finds the file unchanged.
  bool keep_mtime = false;
  // When local_path exists and is a device, FIFO or socket (/dev/null, a named pipe): write
  // the bytes into it, in order, as `cp` does; false replaces it with a regular file, as
  // `sync` (and rsync) do. Its mtime is left alone either way.
  bool write_into_special_file = false;
};

// Downloads `jobs` from `bucket_id` (read CAS tokens from `conn`), creating the parent
// directories of each destination. Checks first that the destinations' file systems have
// room for the files: IoError ending in strerror(ENOSPC) ("No space left on device", as a
// full disk's failed write would say) otherwise. Counters go to `stats` if given
// (files_total is set here). A job's entry may be stale (its path overwritten since it was
// listed, so the bucket no longer sees that file): the path's current file is downloaded
// instead; a path removed meanwhile fails as NotFound.
// Stops at the first failure; files downloaded before it stay in place.
Status DownloadToFiles(RemoteConnection& conn, const std::string& bucket_id,
                       std::span<const DownloadJob> jobs, TransferStats* stats);

// Writes the bytes of `file` to standard output, in order (counted into `stats` as one
// file). A failed write is IoError naming stdout with the system's reason (a full disk
// included). The Xet hash of the bytes written is checked at the end: Corruption when it
// differs (the bytes are out by then; the caller's exit status is what tells).
Status DownloadToStdout(RemoteConnection& conn, const std::string& bucket_id,
                        const RemoteEntry& file, TransferStats* stats);

}  // namespace xet
