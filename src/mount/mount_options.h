// What a mount is asked to do: which bucket (and prefix), where, and the knobs of its
// caches and defaults. Filled by the CLI (cli/mount_command.cc) from flags, the
// environment or `-o` options of mount(8).
#pragma once

#include <cstdint>
#include <string>

#include "client/bucket_transfer/remote_settings.h"

namespace xet {

struct MountOptions {
  RemoteSettings remote;    // endpoint, token, retries, cache directories
  std::string bucket_id;    // "NAMESPACE/BUCKET"
  std::string prefix;       // a directory of the bucket to mount ("" = the whole bucket)
  std::string mountpoint;   // an existing directory
  bool read_only = false;   // every change fails with EROFS
  std::string staging_dir;  // where written files are staged until committed
  // How long a listing or attribute is trusted before the bucket's generation is probed
  // (one cheap request) and, if it changed, the listing fetched again. Also the kernel's
  // entry and attribute timeout.
  int64_t metadata_ttl_ms = 1000;
  // Attributes of entries that carry no POSIX metadata (written by other clients).
  uint32_t default_uid = 0;
  uint32_t default_gid = 0;
  uint32_t file_mode = 0644;
  uint32_t dir_mode = 0755;
  uint64_t read_cache_bytes = 10ull << 30;  // the on-disk chunk cache's bound
  uint64_t read_memory_bytes = 128ull << 20;
  bool allow_other = false;  // let users other than the mounting one in (-o allow_other)
  bool debug = false;        // libfuse's request log on stderr
};

}  // namespace xet
