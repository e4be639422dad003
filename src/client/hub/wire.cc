#include "client/hub/wire.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "client/transport/json_fields.h"
#include "common/ascii.h"
#include "protocol/posix_metadata.h"

namespace xet {
namespace {

using nlohmann::json;

// Fixed-width decimal digits of `s` at `pos`.
std::optional<int> Digits(std::string_view s, size_t pos, size_t n) {
  if (pos + n > s.size()) return std::nullopt;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

Result<RemoteBucket> BucketFrom(const json& j) {
  constexpr std::string_view kDoc = "bucket";
  if (!j.is_object()) return wire_json::Bad(kDoc, "not a JSON object");
  RemoteBucket b;
  auto id = wire_json::Str(j, "id");
  if (!id || id->empty()) return wire_json::Bad(kDoc, "missing \"id\"");
  b.id = std::move(*id);
  if (const json* p = wire_json::Field(j, "private")) {
    if (!p->is_boolean()) return wire_json::Bad(kDoc, "\"private\" is not a boolean");
    b.is_private = p->get<bool>();
  }
  b.created_at = wire_json::Str(j, "createdAt").value_or("");
  if (wire_json::Field(j, "size") && !wire_json::U64(j, "size"))
    return wire_json::Bad(kDoc, "\"size\" is not a count");
  if (wire_json::Field(j, "totalFiles") && !wire_json::U64(j, "totalFiles")) {
    return wire_json::Bad(kDoc, "\"totalFiles\" is not a count");
  }
  b.size = wire_json::U64(j, "size").value_or(0);
  b.total_files = wire_json::U64(j, "totalFiles").value_or(0);
  if (wire_json::Field(j, "generation") && !wire_json::U64(j, "generation")) {
    return wire_json::Bad(kDoc, "\"generation\" is not a count");
  }
  b.generation = wire_json::U64(j, "generation").value_or(0);
  return b;
}

Result<RemoteEntry> EntryFrom(const json& j) {
  constexpr std::string_view kDoc = "listing";
  if (!j.is_object()) return wire_json::Bad(kDoc, "an item is not a JSON object");
  RemoteEntry e;
  auto type = wire_json::Str(j, "type");
  auto path = wire_json::Str(j, "path");
  if (!type || (*type != "file" && *type != "directory")) {
    return wire_json::Bad(kDoc, "an item's \"type\" is neither \"file\" nor \"directory\"");
  }
  if (!path || path->empty()) return wire_json::Bad(kDoc, "an item has no \"path\"");
  e.path = std::move(*path);
  e.is_directory = *type == "directory";
  const std::string what = (e.is_directory ? "directory '" : "file '") + e.path + "'";
  // A directory's mtime (xetstore's directory entries have one) is best effort: directory
  // items of other servers were never checked.
  if (const json* m = wire_json::Field(j, "mtime")) {
    if (m->is_number_integer()) {
      e.mtime_ms = m->get<int64_t>();
    } else if (m->is_string()) {
      auto ms = ParseIsoMillis(m->get_ref<const std::string&>());
      if (ms.ok()) {
        e.mtime_ms = *ms;
      } else if (!e.is_directory) {
        return wire_json::Bad(kDoc, what + ": bad \"mtime\"");
      }
    } else if (!e.is_directory) {
      return wire_json::Bad(kDoc, what + ": bad \"mtime\"");
    }
  }
  if (const json* p = wire_json::Field(j, "posix")) {  // xetstore extension
    auto posix = PosixFromJson(*p);
    if (!posix.ok()) return wire_json::Bad(kDoc, what + ": bad " + posix.status().message());
    if (posix->IsDirectory() != e.is_directory) {
      return wire_json::Bad(kDoc, what + ": its \"posix\" mode is of another file type");
    }
    e.posix = std::move(*posix);
  }
  if (e.is_directory) return e;
  const auto size = wire_json::U64(j, "size");
  if (!size) return wire_json::Bad(kDoc, "file '" + e.path + "' has no \"size\"");
  e.size = *size;
  const auto hex = wire_json::Str(j, "xetHash");
  const auto hash = hex ? Hash::FromHex(*hex) : std::nullopt;
  if (!hash) return wire_json::Bad(kDoc, "file '" + e.path + "' has no valid \"xetHash\"");
  e.xet_hash = *hash;
  if (e.posix && e.posix->IsContentless() && (!e.xet_hash.IsZero() || e.size != 0)) {
    return wire_json::Bad(kDoc,
                          what + ": a symbolic link or special file that is not the empty file");
  }
  e.uploaded_at = wire_json::Str(j, "uploadedAt").value_or("");
  e.content_type = wire_json::Str(j, "contentType").value_or("");
  return e;
}

}  // namespace

Result<int64_t> ParseIsoMillis(std::string_view s) {
  auto bad = [&] {
    return Status::InvalidArgument("not an ISO-8601 time: '" +
                                   std::string(s.substr(0, std::min<size_t>(s.size(), 40))) + "'");
  };
  // YYYY-MM-DDTHH:MM:SS
  const auto y = Digits(s, 0, 4), mo = Digits(s, 5, 2), d = Digits(s, 8, 2);
  const auto h = Digits(s, 11, 2), mi = Digits(s, 14, 2), sec = Digits(s, 17, 2);
  if (!y || !mo || !d || !h || !mi || !sec || s[4] != '-' || s[7] != '-' ||
      (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || s[13] != ':' || s[16] != ':') {
    return bad();
  }
  using namespace std::chrono;
  const year_month_day ymd{year(*y), month(static_cast<unsigned>(*mo)),
                           day(static_cast<unsigned>(*d))};
  if (!ymd.ok() || *h > 23 || *mi > 59 || *sec > 60) return bad();
  size_t pos = 19;
  int64_t millis = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    const size_t start = pos;
    int64_t scale = 100;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      millis += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start || pos - start > 12) return bad();
  }
  int64_t offset_s = 0;
  const std::string_view zone = s.substr(pos);
  if (zone == "Z" || zone == "z") {
    // UTC
  } else if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':') {
    const auto oh = Digits(zone, 1, 2), om = Digits(zone, 4, 2);
    if (!oh || !om || *oh > 23 || *om > 59) return bad();
    offset_s = (*oh * 3600 + *om * 60) * (zone[0] == '+' ? 1 : -1);
  } else {
    return bad();
  }
  const int64_t days_since_epoch = sys_days(ymd).time_since_epoch().count();
  const int64_t seconds = days_since_epoch * 86400 + *h * 3600 + *mi * 60 + *sec - offset_s;
  return seconds * 1000 + millis;
}

std::optional<std::string> NextLinkUrl(std::string_view header) {
  // link-value = "<" URI ">" *( OWS ";" OWS link-param ), separated by ","
  size_t pos = 0;
  while (pos < header.size()) {
    const size_t open = header.find('<', pos);
    if (open == std::string_view::npos) return std::nullopt;
    const size_t close = header.find('>', open + 1);
    if (close == std::string_view::npos) return std::nullopt;
    const std::string_view url = header.substr(open + 1, close - open - 1);
    // Parameters run to the next link-value's '<' (a ',' may appear inside quoted values).
    size_t end = header.find('<', close + 1);
    if (end == std::string_view::npos) end = header.size();
    std::string_view params = header.substr(close + 1, end - close - 1);
    while (!params.empty()) {
      const size_t semi = params.find(';');
      if (semi == std::string_view::npos) break;
      params.remove_prefix(semi + 1);
      size_t stop = params.find(';');
      std::string_view param = params.substr(0, stop);
      while (!param.empty() && (param.front() == ' ' || param.front() == '\t')) {
        param.remove_prefix(1);
      }
      if (param.size() >= 4 && EqualsIgnoreAsciiCase(param.substr(0, 4), "rel=")) {
        std::string_view v = param.substr(4);
        while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == ',')) {
          v.remove_suffix(1);
        }
        if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
        // A rel value is a space-separated list of relation types.
        while (!v.empty()) {
          const size_t sp = v.find(' ');
          if (EqualsIgnoreAsciiCase(v.substr(0, sp), "next")) return std::string(url);
          if (sp == std::string_view::npos) break;
          v.remove_prefix(sp + 1);
        }
      }
    }
    pos = end;
  }
  return std::nullopt;
}

Result<RemoteBucket> ParseBucketJson(std::string_view body) {
  try {
    XET_ASSIGN_OR_RETURN(json j, wire_json::ParseBody(body, "bucket"));
    return BucketFrom(j);
  } catch (const json::exception& e) {
    return wire_json::Bad("bucket", e.what());
  }
}

Result<std::vector<RemoteBucket>> ParseBucketListJson(std::string_view body) {
  try {
    XET_ASSIGN_OR_RETURN(json j, wire_json::ParseBody(body, "bucket list"));
    if (!j.is_array()) return wire_json::Bad("bucket list", "not a JSON array");
    std::vector<RemoteBucket> out;
    out.reserve(j.size());
    for (const json& b : j) {
      XET_ASSIGN_OR_RETURN(auto bucket, BucketFrom(b));
      out.push_back(std::move(bucket));
    }
    return out;
  } catch (const json::exception& e) {
    return wire_json::Bad("bucket list", e.what());
  }
}

Result<std::vector<RemoteEntry>> ParseEntryListJson(std::string_view body) {
  try {
    XET_ASSIGN_OR_RETURN(json j, wire_json::ParseBody(body, "listing"));
    if (!j.is_array()) return wire_json::Bad("listing", "not a JSON array");
    std::vector<RemoteEntry> out;
    out.reserve(j.size());
    for (const json& item : j) {
      XET_ASSIGN_OR_RETURN(auto entry, EntryFrom(item));
      out.push_back(std::move(entry));
    }
    return out;
  } catch (const json::exception& e) {
    return wire_json::Bad("listing", e.what());
  }
}

Result<XetToken> ParseXetTokenJson(std::string_view body) {
  constexpr std::string_view kDoc = "xet token";
  try {
    XET_ASSIGN_OR_RETURN(json j, wire_json::ParseBody(body, kDoc));
    XetToken t;
    auto token = wire_json::Str(j, "accessToken");
    auto url = wire_json::Str(j, "casUrl");
    const json* exp = wire_json::Field(j, "exp");
    if (!token || token->empty()) return wire_json::Bad(kDoc, "missing \"accessToken\"");
    if (!url || url->empty()) return wire_json::Bad(kDoc, "missing \"casUrl\"");
    if (exp == nullptr || !exp->is_number_integer()) return wire_json::Bad(kDoc, "missing \"exp\"");
    t.access_token = std::move(*token);
    t.cas_url = std::move(*url);
    while (!t.cas_url.empty() && t.cas_url.back() == '/') t.cas_url.pop_back();
    t.expires_at = exp->get<int64_t>();
    return t;
  } catch (const json::exception& e) {
    return wire_json::Bad(kDoc, e.what());
  }
}

Result<BatchOutcome> ParseBatchOutcomeJson(std::string_view body) {
  constexpr std::string_view kDoc = "batch";
  try {
    XET_ASSIGN_OR_RETURN(json j, wire_json::ParseBody(body, kDoc));
    BatchOutcome out;
    const auto processed = wire_json::U64(j, "processed");
    const auto succeeded = wire_json::U64(j, "succeeded");
    if (!processed || !succeeded)
      return wire_json::Bad(kDoc, "missing \"processed\" or \"succeeded\"");
    out.processed = *processed;
    out.succeeded = *succeeded;
    if (const json* failed = wire_json::Field(j, "failed")) {
      if (!failed->is_array()) return wire_json::Bad(kDoc, "\"failed\" is not a list");
      for (const json& f : *failed) {
        if (!f.is_object()) return wire_json::Bad(kDoc, "a \"failed\" item is not an object");
        out.failed.push_back({wire_json::Str(f, "path").value_or(""),
                              wire_json::Str(f, "error").value_or("failed")});
      }
    }
    return out;
  } catch (const json::exception& e) {
    return wire_json::Bad(kDoc, e.what());
  }
}

namespace {

// Adds op.posix (if any) as "posix", after checking it keeps the server's rules.
Status AddPosix(const RemoteOp& op, json* j) {
  if (!op.posix) return Status::Ok();
  if (Status st = ValidatePosix(*op.posix); !st.ok()) {
    return Status::InvalidArgument("batch: " + op.path + ": " + st.message());
  }
  (*j)["posix"] = PosixToJson(*op.posix);
  return Status::Ok();
}

}  // namespace

Result<std::string> SerializeBatchOps(std::span<const RemoteOp> ops, const std::string& bucket_id) {
  std::string out;
  try {
    for (const RemoteOp& op : ops) {
      json j;
      switch (op.kind) {
        case RemoteOp::Kind::kAddFile:
          j = {{"type", "addFile"}, {"path", op.path}, {"xetHash", op.xet_hash.ToHex()}};
          if (op.mtime_ms != 0) j["mtime"] = op.mtime_ms;
          if (!op.content_type.empty()) j["contentType"] = op.content_type;
          XET_RETURN_IF_ERROR(AddPosix(op, &j));
          break;
        case RemoteOp::Kind::kDeleteFile:
          j = {{"type", "deleteFile"}, {"path", op.path}};
          break;
        case RemoteOp::Kind::kCopyFile:
          j = {{"type", "copyFile"},
               {"path", op.path},
               {"xetHash", op.xet_hash.ToHex()},
               {"sourceRepoType", "bucket"},
               {"sourceRepoId", op.source_bucket.empty() ? bucket_id : op.source_bucket}};
          break;
        case RemoteOp::Kind::kCopyPrefix:
          j = {{"type", "copyPrefix"}, {"from", op.from}, {"to", op.to}};
          if (!op.source_bucket.empty()) j["sourceRepoId"] = op.source_bucket;
          break;
        case RemoteOp::Kind::kMovePrefix:
          j = {{"type", "movePrefix"}, {"from", op.from}, {"to", op.to}};
          if (op.no_replace) j["noReplace"] = true;
          break;
        case RemoteOp::Kind::kAddDirectory:
        case RemoteOp::Kind::kSetMetadata:
          j = {{"type", op.kind == RemoteOp::Kind::kAddDirectory ? "addDirectory" : "setMetadata"},
               {"path", op.path}};
          if (op.mtime_ms != 0) j["mtime"] = op.mtime_ms;
          if (op.kind == RemoteOp::Kind::kSetMetadata && !op.posix) {
            return Status::InvalidArgument("batch: setMetadata of " + op.path + " needs posix");
          }
          XET_RETURN_IF_ERROR(AddPosix(op, &j));
          break;
      }
      out += j.dump();  // strict: invalid UTF-8 throws (caught below)
      out += '\n';
    }
  } catch (const json::exception&) {
    return Status::InvalidArgument("batch: a path or content type is not valid UTF-8");
  }
  return out;
}

}  // namespace xet
