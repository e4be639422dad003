#include "cli/hash_commands.h"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/output.h"
#include "client/upload/file_hasher.h"

namespace xet::cli {
namespace {

struct HashArgs {
  std::vector<std::string> files;
  bool json = false;
  bool no_sha256 = false;
};

int RunHash(const HashArgs& args) {
  int rc = kExitOk;
  for (const std::string& path : args.files) {
    auto source = OpenFileSource(path);
    Result<FileDigest> digest =
        source.ok() ? DigestSource(**source, {.compute_sha256 = !args.no_sha256, .on_chunk = {}})
                    : Result<FileDigest>(source.status());
    if (!digest.ok()) {
      ReportFailure(digest.status());
      rc = kExitFailure;  // keep going: report every file, like sha256sum
      continue;
    }
    const std::string sha = args.no_sha256 ? "-" : Sha256Hex(digest->sha256);
    if (args.json) {
      nlohmann::json j = {{"name", path},
                          {"xet_hash", digest->file_hash.ToHex()},
                          {"size", digest->size},
                          {"chunks", digest->chunks.size()}};
      if (!args.no_sha256) j["sha256"] = sha;
      std::printf("%s\n", j.dump().c_str());
    } else {
      std::printf("%s %llu %s %s\n", digest->file_hash.ToHex().c_str(),
                  static_cast<unsigned long long>(digest->size), sha.c_str(), path.c_str());
    }
    std::fflush(stdout);
  }
  return rc;
}

int RunChunks(const std::string& path) {
  auto source = OpenFileSource(path);
  if (!source.ok()) return ReportFailure(source.status());
  // Print each chunk as soon as it is hashed: constant memory for output of any length.
  std::string line;
  FileHashOptions opts{.compute_sha256 = false, .on_chunk = [&](const ChunkInfo& c) {
                         line = c.hash.ToHex();
                         line += ' ';
                         line += std::to_string(c.size);
                         line += '\n';
                         std::fwrite(line.data(), 1, line.size(), stdout);
                       }};
  auto digest = DigestSource(**source, opts);
  if (!digest.ok()) return ReportFailure(digest.status());
  return std::fflush(stdout) == 0 ? kExitOk : kExitFailure;
}

}  // namespace

void AddHashCommands(CLI::App& app, int* exit_code) {
  auto hash_args = std::make_shared<HashArgs>();
  CLI::App* hash = app.add_subcommand(
      "hash",
      "Print each file's Xet file hash, size and SHA-256, one line per file:\n"
      "  <xet file hash> <size in bytes> <sha256> <name>\n"
      "The Xet hash is the identity a Xet server gives the file's content. Files of any size\n"
      "are streamed; '-' reads standard input.");
  hash->add_option("files", hash_args->files, "Files to hash ('-' for stdin)")->required();
  hash->add_flag("--json", hash_args->json, "Print one JSON object per file instead");
  hash->add_flag("--no-sha256", hash_args->no_sha256, "Skip SHA-256 (prints '-' in its place)");
  hash->callback([hash_args, exit_code] { *exit_code = RunHash(*hash_args); });

  auto chunk_file = std::make_shared<std::string>();
  CLI::App* chunks = app.add_subcommand(
      "chunks",
      "Print one '<chunk hash> <length>' line per content-defined chunk of FILE, the format\n"
      "of the Xet reference '.chunks' files. '-' reads standard input.");
  chunks->add_option("file", *chunk_file, "File to chunk ('-' for stdin)")->required();
  chunks->callback([chunk_file, exit_code] { *exit_code = RunChunks(*chunk_file); });
}

}  // namespace xet::cli
