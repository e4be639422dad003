#include "http/response_compression.h"

#include <zlib.h>
#include <zstd.h>

#include <cstdlib>
#include <limits>

#include "common/ascii.h"

namespace xet {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The q-value of one Accept-Encoding element's parameters ("q=0.5"); 1 when absent.
double QValue(std::string_view params) {
  while (!params.empty()) {
    size_t semi = params.find(';');
    std::string_view param = Trim(params.substr(0, semi));
    params = semi == std::string_view::npos ? std::string_view() : params.substr(semi + 1);
    if (param.size() >= 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=') {
      std::string value(param.substr(2));
      char* end = nullptr;
      double q = std::strtod(value.c_str(), &end);
      if (end == value.c_str()) return 0;
      return q;
    }
  }
  return 1;
}

}  // namespace

std::string_view ContentEncodingName(ContentEncoding encoding) {
  switch (encoding) {
    case ContentEncoding::kGzip:
      return "gzip";
    case ContentEncoding::kZstd:
      return "zstd";
    case ContentEncoding::kIdentity:
      break;
  }
  return "identity";
}

ContentEncoding ChooseContentEncoding(std::string_view accept_encoding) {
  double gzip_q = -1;
  double zstd_q = -1;
  double star_q = -1;
  while (!accept_encoding.empty()) {
    size_t comma = accept_encoding.find(',');
    std::string_view element = accept_encoding.substr(0, comma);
    accept_encoding =
        comma == std::string_view::npos ? std::string_view() : accept_encoding.substr(comma + 1);
    size_t semi = element.find(';');
    std::string_view token = Trim(element.substr(0, semi));
    double q = semi == std::string_view::npos ? 1.0 : QValue(element.substr(semi + 1));
    if (EqualsIgnoreAsciiCase(token, "gzip") || EqualsIgnoreAsciiCase(token, "x-gzip")) {
      gzip_q = q;
    } else if (EqualsIgnoreAsciiCase(token, "zstd")) {
      zstd_q = q;
    } else if (token == "*") {
      star_q = q;
    }
  }
  if (zstd_q < 0) zstd_q = star_q;
  if (gzip_q < 0) gzip_q = star_q;
  if (zstd_q > 0 && zstd_q >= gzip_q) return ContentEncoding::kZstd;
  if (gzip_q > 0) return ContentEncoding::kGzip;
  return ContentEncoding::kIdentity;
}

Result<std::string> GzipCompress(std::string_view data, int level) {
  if (data.size() > std::numeric_limits<uInt>::max()) {
    return Status::ResourceExhausted("gzip input too large");
  }
  z_stream zs{};
  // windowBits 15 + 16: a gzip wrapper instead of zlib's.
  if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Status::Internal("deflateInit2 failed");
  }
  std::string out(deflateBound(&zs, static_cast<uLong>(data.size())), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&zs, Z_FINISH);
  size_t written = zs.total_out;
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) return Status::Internal("deflate did not finish");
  out.resize(written);
  return out;
}

Result<std::string> ZstdCompress(std::string_view data, int level) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), level);
  if (ZSTD_isError(n)) return Status::Internal(std::string("zstd: ") + ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

}  // namespace xet
