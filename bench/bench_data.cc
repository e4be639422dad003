#include "bench_data.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace xet::bench {
namespace {

uint64_t XorShift(uint64_t& x) {
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return x;
}

std::vector<uint8_t> MakeRandom(size_t n) {
  std::vector<uint8_t> out(n);
  uint64_t x = 0x9E3779B97F4A7C15ULL;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint64_t v = XorShift(x);
    for (int b = 0; b < 8; ++b) out[i + b] = static_cast<uint8_t>(v >> (8 * b));
  }
  for (; i < n; ++i) out[i] = static_cast<uint8_t>(XorShift(x));
  return out;
}

std::vector<uint8_t> LoadFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path);
    std::exit(1);
  }
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

std::vector<uint8_t> MakeText(size_t n) {
  static const char* kWords[] = {
      "model",    "layer", "weight",   "tensor", "the",     "of",    "2026",    "ckpt",
      "gradient", "0.125", "-3.5e-4",  ",",      "\n",      "Tesla", "Seattle", "electric",
      "battery",  "id=",   "WA,98101", "King",   "Model 3", "2019",  "BEV",     "215"};
  constexpr size_t kNumWords = sizeof(kWords) / sizeof(kWords[0]);
  std::vector<uint8_t> out;
  out.reserve(n + 16);
  uint64_t x = 12345;
  while (out.size() < n) {
    const char* w = kWords[XorShift(x) % kNumWords];
    while (*w) out.push_back(static_cast<uint8_t>(*w++));
    out.push_back(' ');
    if (XorShift(x) % 16 == 0) {  // some digits, like ids and coordinates in a CSV
      const std::string num = std::to_string(XorShift(x) % 1000000);
      out.insert(out.end(), num.begin(), num.end());
    }
  }
  out.resize(n);
  return out;
}

size_t BenchBytes() {
  if (const char* env = std::getenv("XETSTORE_BENCH_BYTES")) return std::stoull(env);
  return size_t{1} << 30;
}

const std::vector<uint8_t>& RandomData() {
  static const std::vector<uint8_t> data = [] {
    if (const char* path = std::getenv("XETSTORE_BENCH_RANDOM_FILE")) return LoadFile(path);
    return MakeRandom(BenchBytes());
  }();
  return data;
}

const std::vector<uint8_t>& TextData() {
  static const std::vector<uint8_t> data = MakeText(BenchBytes());
  return data;
}

}  // namespace xet::bench
