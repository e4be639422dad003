#include "client/sync/sync_plan_json.h"

#include <array>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_set>
#include <utility>

#include "protocol/bucket_path.h"

namespace xet {
namespace {

using json = nlohmann::json;

constexpr std::string_view kHeaderType = "xetstore-sync-plan";
// Latest mtime accepted (the server's bound): 9999-12-31T23:59:59.999Z.
constexpr uint64_t kMaxMtimeMs = 253'402'300'799'999;

constexpr std::array kOpKinds = {SyncOpKind::kUpload, SyncOpKind::kDownload, SyncOpKind::kDelete};
constexpr std::array kReasons = {SyncReason::kNew, SyncReason::kSizeChanged,
                                 SyncReason::kMtimeChanged, SyncReason::kContentChanged,
                                 SyncReason::kNotInSource};

// Error text for one line; "" means no error.
using Error = std::string;

template <typename E, size_t N>
std::optional<E> FromName(const std::array<E, N>& values, std::string_view (*name)(E),
                          std::string_view s) {
  for (E v : values) {
    if (name(v) == s) return v;
  }
  return std::nullopt;
}

// Error when `j` has a key outside `allowed`.
Error OnlyKeys(const json& j, std::initializer_list<std::string_view> allowed) {
  for (const auto& [key, value] : j.items()) {
    bool known = false;
    for (std::string_view a : allowed) known = known || key == a;
    if (!known) return "unknown key \"" + key + "\"";
  }
  return {};
}

Error StringField(const json& j, const char* key, std::string* out) {
  const auto it = j.find(key);
  if (it == j.end()) return std::string("missing \"") + key + "\"";
  if (!it->is_string()) return std::string("\"") + key + "\" must be a string";
  *out = it->get<std::string>();
  return {};
}

Error UintField(const json& j, const char* key, uint64_t max, uint64_t* out) {
  const auto it = j.find(key);
  if (it == j.end()) return std::string("missing \"") + key + "\"";
  if (!it->is_number_unsigned() || it->get<uint64_t>() > max) {
    return std::string("\"") + key + "\" must be an integer from 0 to " + std::to_string(max);
  }
  *out = it->get<uint64_t>();
  return {};
}

Error ParseHeader(const json& j, SyncPlan* plan) {
  if (Error e = OnlyKeys(j, {"type", "version", "direction", "source", "destination"});
      !e.empty()) {
    return e;
  }
  std::string type;
  if (Error e = StringField(j, "type", &type); !e.empty() || type != kHeaderType) {
    return "not a sync plan: the first line must be the header "
           "{\"type\":\"xetstore-sync-plan\",...}";
  }
  uint64_t version = 0;
  if (Error e = UintField(j, "version", UINT64_MAX, &version); !e.empty()) return e;
  if (version != kSyncPlanVersion) {
    return "unsupported plan version " + std::to_string(version) + " (this xetstore reads " +
           std::to_string(kSyncPlanVersion) + ")";
  }
  std::string direction;
  if (Error e = StringField(j, "direction", &direction); !e.empty()) return e;
  if (direction == SyncDirectionName(SyncDirection::kUpload)) {
    plan->direction = SyncDirection::kUpload;
  } else if (direction == SyncDirectionName(SyncDirection::kDownload)) {
    plan->direction = SyncDirection::kDownload;
  } else {
    return "\"direction\" must be \"upload\" or \"download\"";
  }
  if (Error e = StringField(j, "source", &plan->source); !e.empty()) return e;
  return StringField(j, "destination", &plan->destination);
}

Error ParseOp(const json& j, SyncDirection direction, SyncOp* op) {
  std::string kind;
  if (Error e = StringField(j, "op", &kind); !e.empty()) return e;
  const auto k = FromName(kOpKinds, SyncOpKindName, kind);
  if (!k) return "unknown op \"" + kind + "\"";
  op->kind = *k;
  const bool is_delete = op->kind == SyncOpKind::kDelete;
  if (is_delete) {
    if (Error e = OnlyKeys(j, {"op", "path", "size", "reason"}); !e.empty()) return e;
  } else {
    const SyncOpKind allowed =
        direction == SyncDirection::kUpload ? SyncOpKind::kUpload : SyncOpKind::kDownload;
    if (op->kind != allowed) {
      return "op \"" + kind + "\" in a plan of direction \"" +
             std::string(SyncDirectionName(direction)) + "\"";
    }
    if (Error e = OnlyKeys(j, {"op", "path", "size", "mtime", "xetHash", "reason"}); !e.empty()) {
      return e;
    }
  }

  if (Error e = StringField(j, "path", &op->path); !e.empty()) return e;
  if (Status s = ValidateBucketPath(op->path); !s.ok()) return "bad \"path\": " + s.message();
  if (Error e = UintField(j, "size", UINT64_MAX, &op->size); !e.empty()) return e;
  if (!is_delete) {
    uint64_t mtime = 0;
    if (Error e = UintField(j, "mtime", kMaxMtimeMs, &mtime); !e.empty()) return e;
    op->mtime_ms = static_cast<int64_t>(mtime);
  }
  if (j.contains("xetHash")) {
    std::string hex;
    if (Error e = StringField(j, "xetHash", &hex); !e.empty()) return e;
    op->xet_hash = Hash::FromHex(hex);
    if (!op->xet_hash) return "\"xetHash\" must be 64 hex digits";
  } else if (op->kind == SyncOpKind::kDownload) {
    return "missing \"xetHash\"";
  }

  std::string reason;
  if (Error e = StringField(j, "reason", &reason); !e.empty()) return e;
  const auto r = FromName(kReasons, SyncReasonName, reason);
  if (!r) return "unknown reason \"" + reason + "\"";
  if (is_delete != (*r == SyncReason::kNotInSource)) {
    return "reason \"" + reason + "\" does not fit op \"" + kind + "\"";
  }
  op->reason = *r;
  return {};
}

}  // namespace

std::string SyncPlanToJsonLines(const SyncPlan& plan) {
  // Invalid UTF-8 is replaced rather than thrown on: such a path is refused when read back.
  std::string out;
  json header = {{"type", kHeaderType},
                 {"version", kSyncPlanVersion},
                 {"direction", SyncDirectionName(plan.direction)},
                 {"source", plan.source},
                 {"destination", plan.destination}};
  out += header.dump(-1, ' ', false, json::error_handler_t::replace) + '\n';
  for (const SyncOp& op : plan.ops) {
    json j = {{"op", SyncOpKindName(op.kind)}, {"path", op.path}, {"size", op.size}};
    if (op.kind != SyncOpKind::kDelete) j["mtime"] = op.mtime_ms;
    if (op.kind != SyncOpKind::kDelete && op.xet_hash) j["xetHash"] = op.xet_hash->ToHex();
    j["reason"] = SyncReasonName(op.reason);
    out += j.dump(-1, ' ', false, json::error_handler_t::replace) + '\n';
  }
  return out;
}

Result<SyncPlan> SyncPlanFromJsonLines(std::string_view text) {
  SyncPlan plan;
  bool have_header = false;
  std::unordered_set<std::string> paths;
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    ++line_no;
    if (line.empty()) continue;

    const auto fail = [&](const Error& why) {
      return Status::InvalidArgument("plan line " + std::to_string(line_no) + ": " + why);
    };
    const json j = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return fail("invalid JSON");
    if (!j.is_object()) return fail("not a JSON object");
    if (!have_header) {
      if (Error e = ParseHeader(j, &plan); !e.empty()) return fail(e);
      have_header = true;
      continue;
    }
    SyncOp op;
    if (Error e = ParseOp(j, plan.direction, &op); !e.empty()) return fail(e);
    if (!paths.insert(op.path).second) {
      return fail("'" + op.path + "' is already named by an earlier op");
    }
    plan.ops.push_back(std::move(op));
  }
  if (!have_header) return Status::InvalidArgument("plan is empty (no header line)");
  return plan;
}

}  // namespace xet
