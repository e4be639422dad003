#include "cli/sha256_flag.h"

namespace xet::cli {

void AddSha256Flag(CLI::App* cmd, bool* record_sha256) {
  cmd->add_flag("--sha256", *record_sha256,
                "Also compute each uploaded file's SHA-256 and record it with the file on the "
                "server (costs one extra pass over the data; buckets do not need it)");
}

}  // namespace xet::cli
