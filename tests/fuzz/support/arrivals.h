// The ways a fuzz target feeds the same bytes to an incremental parser, for the property
// "how the bytes arrive changes nothing":
//
//   for (const xet::fuzz::Arrival& a : xet::fuzz::Arrivals(input, 97)) {
//     Parser p;
//     xet::fuzz::FeedInPieces(input, a, [&](auto piece) { return p.Feed(piece).ok(); });
//     Check(Outcome(p) == whole, "how the bytes arrive changes the outcome");
//   }
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace xet::fuzz {

// The sizes of consecutive pieces, used in turn and then again from the first; each >= 1.
using Arrival = std::vector<size_t>;

// Byte-by-byte arrival can make a parser quadratic: Arrivals offers it only up to this size.
inline constexpr size_t kMaxByteByByteInput = 4096;

// In this order: the input whole; in pieces whose sizes (1 + byte % `modulus`, modulus >= 1)
// come from the input's last 8 bytes, so that the fuzzer steers them; and, when the input
// holds at most kMaxByteByByteInput bytes, one byte at a time.
template <typename Byte>
std::vector<Arrival> Arrivals(std::span<const Byte> input, size_t modulus) {
  std::vector<Arrival> out;
  out.push_back({input.size() + 1});
  Arrival pieces;
  for (size_t i = 0; i < 8 && i < input.size(); ++i) {
    pieces.push_back(1 + static_cast<uint8_t>(input[input.size() - 1 - i]) % modulus);
  }
  if (pieces.empty()) pieces.push_back(1);
  out.push_back(std::move(pieces));
  if (input.size() <= kMaxByteByByteInput) out.push_back({1});
  return out;
}

// Calls `feed(piece)` (piece: a std::span<const Byte>) on consecutive pieces of `input` with
// the sizes `arrival` gives, until the input is used up or `feed` returns false.
template <typename Byte, typename Feed>
void FeedInPieces(std::span<const Byte> input, const Arrival& arrival, Feed&& feed) {
  size_t at = 0;
  for (size_t i = 0; at < input.size(); ++i) {
    const size_t n = std::min(arrival[i % arrival.size()], input.size() - at);
    const std::span<const Byte> piece = input.subspan(at, n);
    at += n;
    if (!feed(piece)) return;
  }
}

}  // namespace xet::fuzz
