// Helpers shared by the tests: locating and loading the conformance vectors, and
// deterministic test data.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "format/hash.h"

namespace xet::testing {

// The conformance folder: $XETSTORE_CONFORMANCE_DIR, else ../shared/conformance beside the
// repository. The loaders below throw, failing the calling test, if a file is absent.
std::filesystem::path ConformanceDir();

// Reads a whole file; throws std::runtime_error (failing the test) if it cannot be read.
std::vector<uint8_t> ReadFileBytes(const std::filesystem::path& path);
// Parses a JSON file from the conformance folder; throws (failing the test) if unreadable.
nlohmann::json LoadConformanceJson(const std::string& name);
std::vector<uint8_t> LoadConformanceFile(const std::string& relative_path);

// Xet hash string -> Hash; throws std::runtime_error on a malformed string.
Hash HashFromHex(const std::string& xet_hex);

// The splitmix64 byte stream used by xet-core's chunker tests (see conformance README).
std::vector<uint8_t> SplitMix64Bytes(uint64_t seed, size_t n);

// Deterministic pseudo-random bytes (fast; not the conformance generator).
std::vector<uint8_t> RandomBytes(size_t n, uint64_t seed);
// Deterministic text-like bytes: words from a small vocabulary, compressible like logs/CSV.
std::vector<uint8_t> TextLikeBytes(size_t n, uint64_t seed);

}  // namespace xet::testing
