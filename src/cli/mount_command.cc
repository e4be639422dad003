#include "cli/mount_command.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/output.h"
#include "cli/remote_failure.h"
#include "client/bucket_transfer/remote_connection.h"
#include "format/sha256.h"
#include "mount/bucket_fs.h"
#include "mount/fuse_mount.h"
#include "mount/range_reader_content.h"
#include "protocol/bucket_path.h"

namespace xet::cli {
namespace {

struct MountArgs {
  std::string source;  // NS/BUCKET[/PREFIX]
  std::string mountpoint;
  bool daemon = false;
  bool read_only = false;
  bool allow_other = false;
  bool debug = false;
  int64_t metadata_ttl_ms = 1000;
  uint64_t cache_size_mb = 10240;
  std::string staging_dir;
  int64_t uid = -1, gid = -1;
  std::string file_mode = "0644", dir_mode = "0755";
  std::vector<std::string> o_options;  // -o a,b=c (mount(8) style)
};

// Applies one `-o` option; returns false for an unknown one.
bool ApplyOption(const std::string& opt, MountArgs* args, RemoteOptions* remote) {
  const size_t eq = opt.find('=');
  const std::string key = opt.substr(0, eq);
  const std::string value = eq == std::string::npos ? "" : opt.substr(eq + 1);
  if (key == "ro" || key == "read_only") {
    args->read_only = true;
  } else if (key == "allow_other") {
    args->allow_other = true;
  } else if (key == "endpoint") {
    remote->endpoint = value;
  } else if (key == "token_file") {
    std::ifstream in(value);
    std::getline(in, remote->token);
  } else if (key == "cache_dir") {
    remote->cache_dir = value;
  } else if (key == "metadata_ttl_ms") {
    args->metadata_ttl_ms = std::stoll(value);
  } else if (key == "uid") {
    args->uid = std::stoll(value);
  } else if (key == "gid") {
    args->gid = std::stoll(value);
  } else if (key == "foreground") {
    args->daemon = false;
  } else if (key == "rw" || key == "dev" || key == "nodev" || key == "suid" || key == "nosuid" ||
             key == "exec" || key == "noexec" || key == "auto" || key == "noauto" ||
             key == "nofail" || key == "_netdev" || key == "user" || key == "users" ||
             key == "defaults" || key == "atime" || key == "noatime" || key == "relatime") {
    // generic mount(8) options, handled by mount(8) or without meaning here
  } else {
    return false;
  }
  return true;
}

std::string DefaultStagingDir(const RemoteSettings& settings, const std::string& bucket,
                              const std::string& mountpoint) {
  const std::string key = settings.endpoint + "\n" + bucket + "\n" + mountpoint;
  const std::string hex =
      Sha256Hex(Sha256Of({reinterpret_cast<const uint8_t*>(key.data()), key.size()}));
  const std::string root = settings.cache_dir.empty()
                               ? std::filesystem::temp_directory_path().string() + "/xetstore"
                               : settings.cache_dir;
  return root + "/mount-staging/" + hex.substr(0, 32);
}

int RunMount(RemoteOptions remote, MountArgs args) {
  for (const std::string& group : args.o_options) {
    std::stringstream ss(group);
    std::string opt;
    while (std::getline(ss, opt, ',')) {
      if (opt.empty()) continue;
      try {
        if (!ApplyOption(opt, &args, &remote)) {
          PrintError("unknown mount option '" + opt + "'", "see xetstore mount --help");
          return kExitUsage;
        }
      } catch (const std::exception&) {
        PrintError("bad value in mount option '" + opt + "'");
        return kExitUsage;
      }
    }
  }
  MountOptions options;
  options.remote = ResolveRemote(remote);
  const size_t first = args.source.find('/');
  const size_t second = first == std::string::npos ? first : args.source.find('/', first + 1);
  options.bucket_id = args.source.substr(0, second);
  if (second != std::string::npos) options.prefix = args.source.substr(second + 1);
  while (!options.prefix.empty() && options.prefix.back() == '/') options.prefix.pop_back();
  if (Status st = ValidateBucketFullName(options.bucket_id); !st.ok()) {
    PrintError("'" + args.source + "' is not NAMESPACE/BUCKET[/PREFIX]: " + st.message());
    return kExitUsage;
  }
  std::error_code ec;
  const auto mp = std::filesystem::canonical(args.mountpoint, ec);
  if (ec || !std::filesystem::is_directory(mp)) {
    PrintError("mount point " + args.mountpoint + " is not a directory",
               "create it first: mkdir -p " + args.mountpoint);
    return kExitUsage;
  }
  options.mountpoint = mp.string();
  options.read_only = args.read_only;
  options.allow_other = args.allow_other;
  options.debug = args.debug;
  options.metadata_ttl_ms = std::max<int64_t>(0, args.metadata_ttl_ms);
  options.default_uid = args.uid >= 0 ? static_cast<uint32_t>(args.uid) : ::getuid();
  options.default_gid = args.gid >= 0 ? static_cast<uint32_t>(args.gid) : ::getgid();
  try {
    options.file_mode = static_cast<uint32_t>(std::stoul(args.file_mode, nullptr, 8)) & 07777;
    options.dir_mode = static_cast<uint32_t>(std::stoul(args.dir_mode, nullptr, 8)) & 07777;
  } catch (const std::exception&) {
    PrintError("--file-mode and --dir-mode take octal modes such as 0644");
    return kExitUsage;
  }
  options.read_cache_bytes = args.cache_size_mb << 20;
  if (!options.remote.cache_dir.empty()) {
    options.remote.chunk_cache_dir = options.remote.cache_dir + "/chunks";
  }
  options.staging_dir =
      args.staging_dir.empty()
          ? DefaultStagingDir(options.remote, options.bucket_id, options.mountpoint)
          : args.staging_dir;

  // Everything that can be checked is checked before mounting, so a bad token, bucket or
  // prefix is an error here, not an empty or failing file system.
  {
    RemoteConnection probe(options.remote);
    auto bucket = probe.hub().GetBucket(options.bucket_id);
    if (!bucket.ok()) return ReportRemoteFailure(bucket.status(), probe.endpoint());
    if (!options.read_only) {
      auto cas = probe.OpenCas(options.bucket_id, /*write=*/true);
      if (!cas.ok()) {
        PrintError("no write access to " + options.bucket_id + ": " + cas.status().message(),
                   "use a write token, or mount with --read-only");
        return ExitCodeFor(cas.status());
      }
    }
  }

  auto mount = FuseMount::Mount(options);
  if (!mount.ok()) {
    PrintError(mount.status().message());
    return kExitFailure;
  }
  if (args.daemon) {
    if (Status st = (*mount)->Daemonize(); !st.ok()) return ReportFailure(st);
  }
  // Threads start only now (after a daemon's fork).
  RemoteConnection conn(options.remote);
  auto read_cas = conn.OpenCas(options.bucket_id, /*write=*/false);
  if (!read_cas.ok()) return ReportRemoteFailure(read_cas.status(), conn.endpoint());
  RangeReaderOptions reading;
  reading.chunk_cache_dir = options.remote.chunk_cache_dir;
  reading.chunk_cache_bytes = options.read_cache_bytes;
  reading.memory_bytes = options.read_memory_bytes;
  RangeReaderContent content((*read_cas)->client(), reading);
  if (Status st = content.status(); !st.ok()) return ReportLocalFailure(st);
  BucketFs fs(options, conn, content);
  if (!args.daemon) {
    std::fprintf(stderr, "xetstore: mounted %s at %s (Ctrl-C or `xetstore unmount %s` to stop)\n",
                 args.source.c_str(), options.mountpoint.c_str(), options.mountpoint.c_str());
  }
  Status st = (*mount)->Serve(fs);
  if (!st.ok()) return ReportFailure(st);
  return kExitOk;
}

int RunUnmount(const std::string& mountpoint) {
  // Commit what is pending first (fsync of the root directory is the mount's "sync all"),
  // so nothing written before the unmount is lost even if the mount process is killed.
  const int fd = ::open(mountpoint.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    PrintError("cannot open " + mountpoint + ": " + std::strerror(errno));
    return kExitFailure;
  }
  const int sync_rc = ::fsync(fd);
  const int sync_errno = errno;
  ::close(fd);
  if (sync_rc != 0) {
    PrintError(
        "committing pending writes under " + mountpoint + " failed: " + std::strerror(sync_errno),
        "the mount stays; see its log, then retry");
    return kExitFailure;
  }
  if (::umount2(mountpoint.c_str(), 0) != 0) {
    const std::string cmd = "fusermount3 -u '" + mountpoint + "'";
    if (std::system(cmd.c_str()) != 0) {
      PrintError("could not unmount " + mountpoint, "is it busy? (lsof +D " + mountpoint + ")");
      return kExitFailure;
    }
  }
  return kExitOk;
}

}  // namespace

std::vector<std::string> RewriteFstabArgs(const std::vector<std::string>& argv) {
  if (argv.size() < 3) return argv;
  const std::string& source = argv[1];
  if (source.empty() || source[0] == '-' || source.find('/') == std::string::npos) return argv;
  std::vector<std::string> out = {argv[0], "mount", "--daemon", source, argv[2]};
  for (size_t i = 3; i < argv.size(); ++i) out.push_back(argv[i]);
  return out;
}

void AddMountCommands(CLI::App& app, const std::shared_ptr<RemoteOptions>& remote, int* exit_code) {
  auto args = std::make_shared<MountArgs>();
  CLI::App* cmd = app.add_subcommand(
      "mount",
      "Mount a bucket (or a directory of it) as a read-write file system (FUSE).\n"
      "Files read are fetched chunk by chunk as needed (cached on disk); files written are\n"
      "staged locally and committed when closed: only chunks the server lacks are sent, and\n"
      "the new version replaces the old one whole. fsync waits for the commit; so does\n"
      "`xetstore unmount`. Semantics and limits: docs/MOUNT.md.\n"
      "fstab: NS/BUCKET /mnt/data fuse.xetstore endpoint=URL,token_file=FILE 0 0");
  cmd->add_option("bucket", args->source, "NAMESPACE/BUCKET or NAMESPACE/BUCKET/PREFIX")
      ->required();
  cmd->add_option("mountpoint", args->mountpoint, "an existing, empty directory")->required();
  cmd->add_flag("--daemon", args->daemon, "Run in the background once mounted");
  cmd->add_flag("--read-only", args->read_only, "Refuse every change (EROFS)");
  cmd->add_option("--metadata-ttl-ms", args->metadata_ttl_ms,
                  "How long listings and attributes are trusted before the bucket is asked "
                  "whether it changed (default 1000)");
  cmd->add_option("--cache-size-mb", args->cache_size_mb,
                  "Bound of the on-disk chunk cache in MiB (default 10240)");
  cmd->add_option("--staging-dir", args->staging_dir,
                  "Where written files wait for their commit (default under the cache "
                  "directory)");
  cmd->add_option("--uid", args->uid, "Owner of entries without stored metadata (default: you)");
  cmd->add_option("--gid", args->gid, "Group of entries without stored metadata (default: yours)");
  cmd->add_option("--file-mode", args->file_mode,
                  "Mode of files without stored metadata (default 0644)");
  cmd->add_option("--dir-mode", args->dir_mode,
                  "Mode of directories without stored metadata (default 0755)");
  cmd->add_flag("--allow-other", args->allow_other,
                "Let other users in (root, or user_allow_other in /etc/fuse.conf)");
  cmd->add_flag("--debug-fuse", args->debug, "Log every FUSE request on stderr");
  cmd->add_option("-o", args->o_options,
                  "mount(8)-style options: ro, allow_other, endpoint=URL, token_file=FILE, "
                  "cache_dir=DIR, metadata_ttl_ms=N, uid=N, gid=N, foreground");
  AddRemoteOptions(cmd, remote.get());
  AddCacheOptions(cmd, remote.get());
  cmd->callback([=] { *exit_code = RunMount(*remote, *args); });

  auto mp = std::make_shared<std::string>();
  CLI::App* un =
      app.add_subcommand("unmount", "Commit what is pending on a mount, then unmount it.");
  un->add_option("mountpoint", *mp, "the mount's directory")->required();
  un->callback([=] { *exit_code = RunUnmount(*mp); });
}

}  // namespace xet::cli
