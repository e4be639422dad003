#include "store/index_blobs.h"

#include <cstddef>
#include <cstring>
#include <type_traits>

namespace xet {
namespace {

// On the little-endian hosts the project targets (checked in format/hash.cc), the in-memory
// records have exactly the blob layout: encoding and decoding are single memcpys.
static_assert(std::is_trivially_copyable_v<XorbChunkRow> &&
              sizeof(XorbChunkRow) == kChunkRowBlobSize &&
              offsetof(XorbChunkRow, compressed_end) == 32 &&
              offsetof(XorbChunkRow, uncompressed_end) == 36);
static_assert(std::is_trivially_copyable_v<FileTerm> && sizeof(FileTerm) == kFileTermBlobSize &&
              offsetof(FileTerm, chunk_start) == 32 && offsetof(FileTerm, chunk_end) == 36 &&
              offsetof(FileTerm, unpacked_bytes) == 40);

template <typename T>
std::vector<uint8_t> EncodeFixed(std::span<const T> items) {
  std::vector<uint8_t> blob(items.size() * sizeof(T));
  if (!items.empty()) std::memcpy(blob.data(), items.data(), blob.size());
  return blob;
}

template <typename T>
Result<std::vector<T>> DecodeFixed(std::span<const uint8_t> blob, const char* what) {
  if (blob.size() % sizeof(T) != 0) {
    return Status::Corruption(std::string("index ") + what + " blob of " +
                              std::to_string(blob.size()) + " bytes is not a multiple of " +
                              std::to_string(sizeof(T)));
  }
  std::vector<T> items(blob.size() / sizeof(T));
  if (!items.empty()) std::memcpy(items.data(), blob.data(), blob.size());
  return items;
}

}  // namespace

std::vector<uint8_t> EncodeChunkRows(std::span<const XorbChunkRow> rows) {
  return EncodeFixed(rows);
}
Result<std::vector<XorbChunkRow>> DecodeChunkRows(std::span<const uint8_t> blob) {
  return DecodeFixed<XorbChunkRow>(blob, "xorb chunk");
}

std::vector<uint8_t> EncodeFileTerms(std::span<const FileTerm> terms) { return EncodeFixed(terms); }
Result<std::vector<FileTerm>> DecodeFileTerms(std::span<const uint8_t> blob) {
  return DecodeFixed<FileTerm>(blob, "file term");
}

Result<std::string> EncodeScopeList(std::span<const Scope> scopes) {
  std::string text;
  for (size_t i = 0; i < scopes.size(); ++i) {
    if (scopes[i].empty() || scopes[i].find('\n') != std::string::npos) {
      return Status::InvalidArgument("token scope must be non-empty and without newlines");
    }
    if (i > 0) text.push_back('\n');
    text.append(scopes[i]);
  }
  return text;
}

std::vector<Scope> DecodeScopeList(std::string_view text) {
  std::vector<Scope> scopes;
  if (text.empty()) return scopes;
  size_t start = 0;
  while (true) {
    const size_t nl = text.find('\n', start);
    scopes.emplace_back(text.substr(start, nl == std::string_view::npos ? nl : nl - start));
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return scopes;
}

std::string ScopesAsJson(std::span<const Scope> scopes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string json = "[";
  for (size_t i = 0; i < scopes.size(); ++i) {
    if (i > 0) json.push_back(',');
    json.push_back('"');
    for (unsigned char c : scopes[i]) {
      if (c == '"' || c == '\\') {
        json.push_back('\\');
        json.push_back(static_cast<char>(c));
      } else if (c < 0x20) {
        json.append("\\u00");
        json.push_back(kHex[c >> 4]);
        json.push_back(kHex[c & 0xf]);
      } else {
        json.push_back(static_cast<char>(c));
      }
    }
    json.push_back('"');
  }
  json.push_back(']');
  return json;
}

}  // namespace xet
