// `xetstore mount NS/BUCKET[/PREFIX] MOUNTPOINT` and `xetstore unmount MOUNTPOINT`: a
// bucket as a read-write FUSE file system (mount/), and the fstab form that mount(8)
// runs through mount.fuse3 (`xetstore NS/BUCKET MOUNTPOINT -o OPTIONS`).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "cli/remote_options.h"

namespace xet::cli {

void AddMountCommands(CLI::App& app, const std::shared_ptr<RemoteOptions>& remote, int* exit_code);

// The fstab form: when argv is `xetstore SOURCE MOUNTPOINT -o OPTS` with SOURCE a
// bucket (not a command), the arguments of the equivalent `xetstore mount --daemon ...`;
// otherwise argv unchanged.
std::vector<std::string> RewriteFstabArgs(const std::vector<std::string>& argv);

}  // namespace xet::cli
