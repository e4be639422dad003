#include "server/json_parse.h"

#include <string>

namespace xet {
namespace {

using nlohmann::json;
using DomBuilder = nlohmann::detail::json_sax_dom_parser<json>;

// The library's DOM builder behind a depth check: returning false from a SAX event stops
// the parse at once.
class DepthLimitedBuilder {
 public:
  DepthLimitedBuilder(json* out, size_t max_depth) : dom_(*out, false), max_depth_(max_depth) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& s) {
    return dom_.number_float(v, s);
  }
  bool string(json::string_t& v) { return dom_.string(v); }
  bool binary(json::binary_t& v) { return dom_.binary(v); }
  bool start_object(std::size_t n) { return Enter() && dom_.start_object(n); }
  bool key(json::string_t& k) { return dom_.key(k); }
  bool end_object() { return Leave() && dom_.end_object(); }
  bool start_array(std::size_t n) { return Enter() && dom_.start_array(n); }
  bool end_array() { return Leave() && dom_.end_array(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    error_ = e.what();
    return false;
  }

  const std::string& error() const { return error_; }

 private:
  bool Enter() {
    if (++depth_ <= max_depth_) return true;
    error_ = "JSON nests deeper than " + std::to_string(max_depth_) + " levels";
    return false;
  }
  bool Leave() {
    --depth_;
    return true;
  }

  DomBuilder dom_;
  size_t max_depth_;
  size_t depth_ = 0;
  std::string error_;
};

}  // namespace

Result<json> ParseClientJson(std::string_view text, size_t max_depth) {
  json out;
  DepthLimitedBuilder builder(&out, max_depth);
  const bool ok = json::sax_parse(text.begin(), text.end(), &builder);
  if (!ok) {
    return Status::InvalidArgument(builder.error().empty() ? std::string("malformed JSON")
                                                           : builder.error());
  }
  return out;
}

}  // namespace xet
