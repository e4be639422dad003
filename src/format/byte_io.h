// Bounds-checked little-endian reading and appending of fixed-width fields.
//
// ByteReader never reads past its span: every Read* returns false (and leaves the
// reader unchanged) if fewer bytes remain than requested. Parsers of untrusted bytes
// build on it so that truncated input is an error, never an out-of-bounds read.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "format/hash.h"

namespace xet {

class ByteReader {
 public:
  explicit ByteReader(std::span<const uint8_t> data) : data_(data) {}

  size_t position() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }
  size_t size() const { return data_.size(); }
  bool AtEnd() const { return pos_ == data_.size(); }

  // Moves to absolute offset `pos`. False if pos > size().
  bool Seek(size_t pos) {
    if (pos > data_.size()) return false;
    pos_ = pos;
    return true;
  }
  bool Skip(size_t n) {
    if (n > remaining()) return false;
    pos_ += n;
    return true;
  }
  bool ReadU8(uint8_t* v) { return ReadLe(v, 1); }
  bool ReadU24(uint32_t* v) {
    *v = 0;
    return ReadLe(v, 3);
  }
  bool ReadU32(uint32_t* v) { return ReadLe(v, 4); }
  bool ReadU64(uint64_t* v) { return ReadLe(v, 8); }
  bool ReadHash(Hash* h) {
    if (remaining() < Hash::kSize) return false;
    *h = Hash::FromBytes(data_.data() + pos_);
    pos_ += Hash::kSize;
    return true;
  }
  bool ReadBytes(void* out, size_t n) {
    if (n > remaining()) return false;
    std::memcpy(out, data_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  // A view of the next n bytes, advancing past them. False if fewer remain.
  bool ReadSpan(size_t n, std::span<const uint8_t>* out) {
    if (n > remaining()) return false;
    *out = data_.subspan(pos_, n);
    pos_ += n;
    return true;
  }

 private:
  template <typename T>
  bool ReadLe(T* v, size_t width) {
    if (width > remaining()) return false;
    T value = 0;
    std::memcpy(&value, data_.data() + pos_, width);  // little-endian host (see hash.cc)
    *v = value;
    pos_ += width;
    return true;
  }

  std::span<const uint8_t> data_;
  size_t pos_ = 0;
};

// Appends little-endian fields to a byte vector.
class ByteWriter {
 public:
  explicit ByteWriter(std::vector<uint8_t>* out) : out_(out) {}

  void U8(uint8_t v) { out_->push_back(v); }
  // Requires v < 2^24.
  void U24(uint32_t v) { Le(v, 3); }
  void U32(uint32_t v) { Le(v, 4); }
  void U64(uint64_t v) { Le(v, 8); }
  void PutHash(const Hash& h) { Bytes(h.data(), Hash::kSize); }
  void Bytes(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out_->insert(out_->end(), b, b + n);
  }
  void Zeros(size_t n) { out_->insert(out_->end(), n, 0); }
  size_t size() const { return out_->size(); }

 private:
  template <typename T>
  void Le(T v, size_t width) {
    uint8_t buf[8];
    std::memcpy(buf, &v, sizeof(T));
    out_->insert(out_->end(), buf, buf + width);
  }
  std::vector<uint8_t>* out_;
};

}  // namespace xet
