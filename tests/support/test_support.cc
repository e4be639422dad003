#include "support/test_support.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>

#include "support/file_contents.h"

namespace xet::testing {

std::filesystem::path ConformanceDir() {
  if (const char* env = std::getenv("XETSTORE_CONFORMANCE_DIR"); env && *env) return env;
  return XETSTORE_DEFAULT_CONFORMANCE_DIR;
}

std::vector<uint8_t> ReadFileBytes(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw std::runtime_error("cannot open " + path.string());
  }
  const std::string bytes = ReadWholeFile(path);
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

std::vector<uint8_t> LoadConformanceFile(const std::string& relative_path) {
  const auto path = ConformanceDir() / relative_path;
  if (!std::filesystem::exists(path)) {
    throw std::runtime_error("conformance file missing: " + path.string() +
                             " (set XETSTORE_CONFORMANCE_DIR to the shared/conformance folder)");
  }
  return ReadFileBytes(path);
}

nlohmann::json LoadConformanceJson(const std::string& name) {
  const auto bytes = LoadConformanceFile(name);
  return nlohmann::json::parse(bytes.begin(), bytes.end());
}

Hash HashFromHex(const std::string& xet_hex) {
  auto h = Hash::FromHex(xet_hex);
  if (!h) throw std::runtime_error("bad hash string in test data: " + xet_hex);
  return *h;
}

std::vector<uint8_t> SplitMix64Bytes(uint64_t seed, size_t n) {
  std::vector<uint8_t> out;
  out.reserve(n + 8);
  uint64_t state = seed;
  while (out.size() < n) {
    state += 0x9E3779B97F4A7C15ULL;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z = z ^ (z >> 31);
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(z >> (8 * i)));
  }
  out.resize(n);
  return out;
}

std::vector<uint8_t> RandomBytes(size_t n, uint64_t seed) {
  std::vector<uint8_t> out(n);
  uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    out[i] = static_cast<uint8_t>(x >> 24);
  }
  return out;
}

std::vector<uint8_t> TextLikeBytes(size_t n, uint64_t seed) {
  static const char* kWords[] = {"model",    "layer",   "weight",     "tensor",   "the",
                                 "of",       "2026",    "checkpoint", "gradient", "0.125",
                                 "-3.5e-4",  ",",       "\n",         "vehicle",  "Seattle",
                                 "electric", "battery", "id=",        "42"};
  constexpr size_t kNumWords = sizeof(kWords) / sizeof(kWords[0]);
  std::vector<uint8_t> out;
  out.reserve(n + 16);
  uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 7;
  while (out.size() < n) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const char* w = kWords[x % kNumWords];
    while (*w) out.push_back(static_cast<uint8_t>(*w++));
    out.push_back(' ');
  }
  out.resize(n);
  return out;
}

}  // namespace xet::testing
