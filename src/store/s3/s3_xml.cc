#include "store/s3/s3_xml.h"

#include <expat.h>

#include <charconv>
#include <functional>
#include <memory>

namespace xet {
namespace {

constexpr size_t kMaxDepth = 16;
constexpr size_t kMaxText = 64u << 10;

// Walks a document: `on_leaf(path, text)` for each element as it closes, with its path of
// local names ("ListBucketResult/Contents/Key") and its text (empty for elements with
// children). Stops at the first error `on_leaf` returns.
class XmlWalker {
 public:
  using LeafFn = std::function<Status(std::string_view path, std::string_view text)>;

  static Status Walk(std::string_view xml, const LeafFn& on_leaf) {
    if (xml.size() > kMaxS3XmlBytes) {
      return Status::Corruption("S3 answer of " + std::to_string(xml.size()) +
                                " bytes is over the limit for XML answers");
    }
    XmlWalker w(on_leaf);
    std::unique_ptr<XML_ParserStruct, decltype(&XML_ParserFree)> parser(
        XML_ParserCreateNS(nullptr, '|'), &XML_ParserFree);
    if (!parser) return Status::ResourceExhausted("cannot create an XML parser");
    w.parser_ = parser.get();
    XML_SetUserData(parser.get(), &w);
    XML_SetElementHandler(parser.get(), &XmlWalker::Start, &XmlWalker::End);
    XML_SetCharacterDataHandler(parser.get(), &XmlWalker::Text);
    XML_SetStartDoctypeDeclHandler(parser.get(), &XmlWalker::Doctype);
    const XML_Status st =
        XML_Parse(parser.get(), xml.data(), static_cast<int>(xml.size()), XML_TRUE);
    if (!w.error_.ok()) return w.error_;
    if (st != XML_STATUS_OK) {
      return Status::Corruption(std::string("malformed XML in S3 answer: ") +
                                XML_ErrorString(XML_GetErrorCode(parser.get())));
    }
    return Status::Ok();
  }

 private:
  explicit XmlWalker(const LeafFn& on_leaf) : on_leaf_(on_leaf) {}

  void Fail(Status st) {
    if (error_.ok()) error_ = std::move(st);
    XML_StopParser(parser_, XML_FALSE);
  }

  static void Start(void* self, const XML_Char* name, const XML_Char**) {
    auto& w = *static_cast<XmlWalker*>(self);
    if (w.depth_ >= kMaxDepth) return w.Fail(Status::Corruption("S3 answer nests too deeply"));
    std::string_view local(name);
    if (size_t bar = local.rfind('|'); bar != std::string_view::npos) local.remove_prefix(bar + 1);
    w.ends_.push_back(w.path_.size());
    if (!w.path_.empty()) w.path_ += '/';
    w.path_.append(local);
    w.text_.clear();
    ++w.depth_;
  }

  static void End(void* self, const XML_Char*) {
    auto& w = *static_cast<XmlWalker*>(self);
    if (!w.error_.ok()) return;
    if (Status st = w.on_leaf_(w.path_, w.text_); !st.ok()) return w.Fail(std::move(st));
    w.text_.clear();
    w.path_.resize(w.ends_.back());
    w.ends_.pop_back();
    --w.depth_;
  }

  static void Text(void* self, const XML_Char* s, int len) {
    auto& w = *static_cast<XmlWalker*>(self);
    if (w.text_.size() + static_cast<size_t>(len) > kMaxText) {
      return w.Fail(Status::Corruption("S3 answer has an element text over 64 KiB"));
    }
    w.text_.append(s, static_cast<size_t>(len));
  }

  static void Doctype(void* self, const XML_Char*, const XML_Char*, const XML_Char*, int) {
    static_cast<XmlWalker*>(self)->Fail(Status::Corruption("S3 answer declares a DTD"));
  }

  const LeafFn& on_leaf_;
  XML_Parser parser_ = nullptr;
  Status error_;
  std::string path_;
  std::vector<size_t> ends_;
  std::string text_;
  size_t depth_ = 0;
};

Result<uint64_t> ParseSize(std::string_view text) {
  uint64_t v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || text.empty()) {
    return Status::Corruption("S3 listing has a size that is not a number: '" +
                              std::string(text.substr(0, 40)) + "'");
  }
  return v;
}

}  // namespace

Result<S3Error> ParseS3Error(std::string_view xml) {
  S3Error e;
  XET_RETURN_IF_ERROR(XmlWalker::Walk(xml, [&](std::string_view path, std::string_view text) {
    if (path == "Error/Code") e.code = text;
    if (path == "Error/Message") e.message = text;
    return Status::Ok();
  }));
  return e;
}

Result<S3ListPage> ParseListObjectsV2(std::string_view xml) {
  S3ListPage page;
  S3ListPage::Object current;
  bool has_key = false, has_size = false, root = false;
  XET_RETURN_IF_ERROR(
      XmlWalker::Walk(xml, [&](std::string_view path, std::string_view text) -> Status {
        if (path == "ListBucketResult") root = true;
        if (path == "ListBucketResult/Contents/Key") {
          current.key = text;
          has_key = true;
        } else if (path == "ListBucketResult/Contents/Size") {
          XET_ASSIGN_OR_RETURN(current.size, ParseSize(text));
          has_size = true;
        } else if (path == "ListBucketResult/Contents") {
          if (!has_key || !has_size) {
            return Status::Corruption("S3 listing has an object without its key or size");
          }
          page.objects.push_back(std::move(current));
          current = {};
          has_key = has_size = false;
        } else if (path == "ListBucketResult/IsTruncated") {
          page.truncated = text == "true";
        } else if (path == "ListBucketResult/NextContinuationToken") {
          page.next_token = text;
        }
        return Status::Ok();
      }));
  if (!root) return Status::Corruption("S3 listing is not a <ListBucketResult>");
  if (page.truncated && page.next_token.empty()) {
    return Status::Corruption("S3 listing is truncated but gives no continuation token");
  }
  return page;
}

Result<std::string> ParseInitiateMultipartUpload(std::string_view xml) {
  std::string id;
  XET_RETURN_IF_ERROR(XmlWalker::Walk(xml, [&](std::string_view path, std::string_view text) {
    if (path == "InitiateMultipartUploadResult/UploadId") id = text;
    return Status::Ok();
  }));
  if (id.empty()) return Status::Corruption("S3 multipart upload started without an UploadId");
  return id;
}

Result<S3Error> ParseCompleteMultipartUpload(std::string_view xml, bool* completed) {
  S3Error e;
  *completed = false;
  XET_RETURN_IF_ERROR(XmlWalker::Walk(xml, [&](std::string_view path, std::string_view text) {
    if (path == "CompleteMultipartUploadResult") *completed = true;
    if (path == "Error/Code") e.code = text;
    if (path == "Error/Message") e.message = text;
    return Status::Ok();
  }));
  if (!*completed && e.code.empty()) {
    return Status::Corruption(
        "S3 answered CompleteMultipartUpload with neither a result nor "
        "an error");
  }
  return e;
}

}  // namespace xet
