#include "server/hub/batch_request.h"

#include <algorithm>
#include <initializer_list>
#include <nlohmann/json.hpp>

#include "protocol/bucket_path.h"
#include "protocol/posix_metadata.h"
#include "server/json_parse.h"

namespace xet {
namespace {

using nlohmann::json;

// Latest accepted mtime: 9999-12-31T23:59:59.999Z.
constexpr int64_t kMaxMtimeMs = 253'402'300'799'999;

// Each check returns the error text, or "" when the field is fine.
using Error = std::string;

Error RequiredString(const json& j, const char* field, std::string* out) {
  const auto it = j.find(field);
  if (it == j.end() || it->is_null()) return std::string("missing \"") + field + "\"";
  if (!it->is_string()) return std::string("\"") + field + "\" must be a string";
  *out = it->get<std::string>();
  return {};
}

Error PathField(const json& j, const char* field, std::string* out) {
  if (Error e = RequiredString(j, field, out); !e.empty()) return e;
  const Status st = ValidateBucketPath(*out);
  if (!st.ok()) return std::string("invalid \"") + field + "\": " + st.message();
  return {};
}

Error HashField(const json& j, Hash* out) {
  std::string text;
  if (Error e = RequiredString(j, "xetHash", &text); !e.empty()) return e;
  const auto h = Hash::FromHex(text);
  if (!h) return "\"xetHash\" must be 64 hexadecimal digits";
  *out = *h;
  return {};
}

Error MtimeField(const json& j, int64_t* out) {
  const auto it = j.find("mtime");
  if (it == j.end() || it->is_null()) return {};
  double ms = 0;
  if (it->is_number_integer() || it->is_number_unsigned() || it->is_number_float()) {
    ms = it->get<double>();
  } else {
    return "\"mtime\" must be a number (unix milliseconds)";
  }
  if (!(ms >= 0 && ms <= static_cast<double>(kMaxMtimeMs))) {
    return "\"mtime\" must be between 0 and 253402300799999 (unix milliseconds)";
  }
  *out = static_cast<int64_t>(ms);
  return {};
}

Error ContentTypeField(const json& j, std::string* out) {
  const auto it = j.find("contentType");
  if (it == j.end() || it->is_null()) return {};
  if (!it->is_string()) return "\"contentType\" must be a string";
  std::string v = it->get<std::string>();
  if (v.size() > kMaxContentTypeBytes) return "\"contentType\" is longer than 255 characters";
  for (const char c : v) {
    if (c < 0x20 || c > 0x7E) return "\"contentType\" must be printable ASCII";
  }
  *out = std::move(v);
  return {};
}

Error SourceBucketField(const json& j, bool required, std::string_view self, std::string* out) {
  const auto it = j.find("sourceRepoId");
  if (it == j.end() || it->is_null()) return required ? "missing \"sourceRepoId\"" : "";
  if (!it->is_string()) return "\"sourceRepoId\" must be a string";
  std::string id = it->get<std::string>();
  const Status st = ValidateBucketFullName(id);
  if (!st.ok()) return "invalid \"sourceRepoId\": " + st.message();
  *out = id == self ? std::string() : std::move(id);
  return {};
}

// The optional "posix" object.
Error PosixField(const json& j, std::optional<PosixMetadata>* out) {
  const auto it = j.find("posix");
  if (it == j.end() || it->is_null()) return {};
  auto posix = PosixFromJson(*it);
  if (!posix.ok()) return "invalid \"posix\": " + posix.status().message();
  *out = std::move(*posix);
  return {};
}

Error NoReplaceField(const json& j, bool* out) {
  const auto it = j.find("noReplace");
  if (it == j.end() || it->is_null()) return {};
  if (!it->is_boolean()) return "\"noReplace\" must be true or false";
  *out = it->get<bool>();
  return {};
}

// Whether directory `a` is `b` or lies inside it, or the reverse.
bool Overlap(std::string_view a, std::string_view b) {
  auto inside = [](std::string_view x, std::string_view dir) {
    return x == dir || (x.size() > dir.size() && x.starts_with(dir) && x[dir.size()] == '/');
  };
  return inside(a, b) || inside(b, a);
}

Error ParseOp(const json& j, std::string_view self, BatchRequestOp* out) {
  // Report the path as given, even when the operation turns out to be invalid: "from" for
  // prefix operations, "path" for the others (either, when the type is unknown).
  const auto type_it = j.find("type");
  const bool prefix_op =
      type_it != j.end() && (*type_it == "copyPrefix" || *type_it == "movePrefix");
  for (const char* field : {prefix_op ? "from" : "path", "from"}) {
    if (auto it = j.find(field); it != j.end() && it->is_string()) {
      out->path = it->get<std::string>();
      break;
    }
  }
  BucketOp op;
  std::string type;
  if (Error e = RequiredString(j, "type", &type); !e.empty()) return e;
  if (type == "addFile" || type == "deleteFile" || type == "copyFile") {
    if (Error e = PathField(j, "path", &op.path); !e.empty()) return e;
    if (type == "deleteFile") {
      op.kind = BucketOp::Kind::kDeleteFile;
    } else if (type == "addFile") {
      op.kind = BucketOp::Kind::kAddFile;
      if (Error e = HashField(j, &op.file_hash); !e.empty()) return e;
      if (Error e = MtimeField(j, &op.mtime_ms); !e.empty()) return e;
      if (Error e = ContentTypeField(j, &op.content_type); !e.empty()) return e;
      if (Error e = PosixField(j, &op.posix); !e.empty()) return e;
      if (op.posix && op.posix->IsDirectory()) {
        return "addFile: \"posix\" must be a regular file's, a symbolic link's or a special "
               "file's (use addDirectory for directories)";
      }
      if (op.posix && op.posix->IsContentless() && !op.file_hash.IsZero()) {
        return "addFile: with a symbolic link's or a special file's \"posix\", \"xetHash\" "
               "must be the empty file's (64 zeros)";
      }
    } else {
      op.kind = BucketOp::Kind::kCopyFile;
      if (Error e = HashField(j, &op.file_hash); !e.empty()) return e;
      if (auto it = j.find("sourceRepoType"); it != j.end() && !it->is_null()) {
        if (!it->is_string()) return "\"sourceRepoType\" must be a string";
        if (*it != "bucket") {
          return "copying from a " + it->get<std::string>() +
                 " repository is not supported; the source must be a bucket";
        }
      }
      std::string source;
      if (Error e = SourceBucketField(j, true, self, &source); !e.empty()) return e;
      op.source_bucket = source.empty() ? std::string(self) : std::move(source);
    }
  } else if (type == "copyPrefix" || type == "movePrefix") {
    if (Error e = PathField(j, "from", &op.from); !e.empty()) return e;
    if (Error e = PathField(j, "to", &op.to); !e.empty()) return e;
    if (type == "copyPrefix") {
      op.kind = BucketOp::Kind::kCopyPrefix;
      if (Error e = SourceBucketField(j, false, self, &op.source_bucket); !e.empty()) return e;
    } else {
      op.kind = BucketOp::Kind::kMovePrefix;
      if (j.contains("sourceRepoId")) return "movePrefix works within one bucket (no sourceRepoId)";
      if (Error e = NoReplaceField(j, &op.no_replace); !e.empty()) return e;
    }
    // A copy reads the source as it was before the operation, so it may target its own
    // subdirectory; a move may not (its sources are removed afterwards).
    if (op.kind == BucketOp::Kind::kMovePrefix && Overlap(op.from, op.to)) {
      return "movePrefix: \"from\" and \"to\" may not be the same directory or contain each "
             "other";
    }
  } else if (type == "addDirectory" || type == "setMetadata") {
    if (Error e = PathField(j, "path", &op.path); !e.empty()) return e;
    if (Error e = MtimeField(j, &op.mtime_ms); !e.empty()) return e;
    if (Error e = PosixField(j, &op.posix); !e.empty()) return e;
    if (type == "addDirectory") {
      op.kind = BucketOp::Kind::kAddDirectory;
      if (op.posix && !op.posix->IsDirectory()) {
        return "addDirectory: \"posix\" must be a directory's (mode type 0040000)";
      }
    } else {
      op.kind = BucketOp::Kind::kSetMetadata;
      if (!op.posix) return "missing \"posix\"";
    }
  } else {
    return "unknown operation type '" + type +
           "' (expected addFile, deleteFile, copyFile, copyPrefix, movePrefix, addDirectory or "
           "setMetadata)";
  }
  out->op = std::move(op);
  return {};
}

// Removes the first line from *body and returns it, without its "\n" or "\r\n".
std::string_view NextLine(std::string_view* body) {
  const size_t nl = body->find('\n');
  std::string_view line = body->substr(0, nl);
  *body = nl == std::string_view::npos ? std::string_view() : body->substr(nl + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t") == std::string_view::npos;
}

}  // namespace

Result<std::vector<BatchRequestOp>> ParseBatchRequest(std::string_view body,
                                                      std::string_view bucket_full_name,
                                                      size_t max_ops) {
  // Room for exactly the operations (an entry is ~280 bytes: none for blank lines).
  size_t operations = 0;
  for (std::string_view rest = body; !rest.empty();) {
    if (!IsBlank(NextLine(&rest))) ++operations;
  }
  std::vector<BatchRequestOp> ops;
  ops.reserve(std::min(max_ops, operations));
  size_t line_no = 0;
  while (!body.empty()) {
    const std::string_view line = NextLine(&body);
    ++line_no;
    if (IsBlank(line)) continue;
    if (ops.size() == max_ops) {
      return Status::ResourceExhausted("a batch holds at most " + std::to_string(max_ops) +
                                       " operations; split it into several requests");
    }
    if (line.size() > kMaxBatchLineBytes) {
      return Status::InvalidArgument("line " + std::to_string(line_no) + " is longer than " +
                                     std::to_string(kMaxBatchLineBytes) +
                                     " bytes; an operation is one short JSON object");
    }
    auto parsed = ParseClientJson(line);
    if (!parsed.ok() || !parsed->is_object()) {
      return Status::InvalidArgument("line " + std::to_string(line_no) +
                                     " is not a JSON object; the body must be NDJSON, one "
                                     "operation object per line");
    }
    BatchRequestOp& out = ops.emplace_back();
    out.error = ParseOp(*parsed, bucket_full_name, &out);
  }
  return ops;
}

}  // namespace xet
