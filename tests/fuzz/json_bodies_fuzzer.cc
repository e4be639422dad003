// libFuzzer target: the JSON request bodies (server/request_bodies.h: bucket create and
// move, paths-info, batch reconstruction) and the bounded JSON reader under them
// (server/json_parse.h).
//
// Input: the body; every parser reads it.
// Properties:
//   - no parser crashes; every error is InvalidArgument with a message;
//   - ParseClientJson accepts exactly what nlohmann::json::parse accepts, up to the depth
//     limit, and to the same document; beyond the limit it fails;
//   - create: accepted only for a blank body or an object; "private" wins when given;
//   - move: both ids are valid NS/NAME (rebuilt from the parts they came from);
//   - paths-info: at most the cap, each path valid (no '..', NUL, leading '/'), no
//     duplicates, in input order;
//   - batch reconstruction: at most the cap, no duplicate hashes, each hash round-trips
//     through its hex form;
//   - heap growth stays linear in the input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>

#include "fuzz/support/heap_meter.h"
#include "fuzz/support/property_check.h"
#include "protocol/bucket_path.h"
#include "server/hub/batch_request.h"
#include "server/json_parse.h"
#include "server/request_bodies.h"

namespace {

constexpr xet::fuzz::PropertyCheck Check("json_bodies_fuzzer");

template <class T>
bool FailsCleanly(const xet::Result<T>& r) {
  if (r.ok()) return false;
  Check.Refusal(r.status(), xet::Status::Code::kInvalidArgument);
  return true;
}

// Depth of the deepest array/object in a parsed document (iterative: documents can nest).
size_t Depth(const nlohmann::json& j) {
  size_t deepest = 0;
  std::vector<std::pair<const nlohmann::json*, size_t>> stack = {{&j, 0}};
  while (!stack.empty()) {
    auto [node, depth] = stack.back();
    stack.pop_back();
    if (!node->is_structured()) continue;
    deepest = std::max(deepest, depth + 1);
    for (const auto& child : *node) stack.push_back({&child, depth + 1});
  }
  return deepest;
}

void CheckJsonReader(std::string_view body) {
  auto bounded = xet::ParseClientJson(body);
  const auto reference = nlohmann::json::parse(body, nullptr, false);
  if (reference.is_discarded()) {
    Check(FailsCleanly(bounded), "accepted what nlohmann rejects");
    return;
  }
  if (Depth(reference) > xet::kMaxClientJsonDepth) {
    Check(FailsCleanly(bounded), "accepted a document beyond the depth limit");
    return;
  }
  Check(bounded.ok() && *bounded == reference, "differs from nlohmann's parse");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  xet::fuzz::HeapScope heap;
  // The reference parse builds a DOM of unbounded depth; only do it where that is cheap.
  if (size <= 4096) CheckJsonReader(body);

  if (auto create = xet::ParseBucketCreateBody(body); !FailsCleanly(create)) {
    const bool blank = body.find_first_not_of(" \t\r\n") == std::string_view::npos;
    auto j = xet::ParseClientJson(body);
    Check(blank || (j.ok() && j->is_object()), "create accepted a non-object");
    if (!blank) {
      auto it = j->find("private");
      if (it != j->end() && it->is_boolean()) Check(*create == it->get<bool>(), "private lost");
    }
  }

  if (auto move = xet::ParseBucketMoveBody(body); !FailsCleanly(move)) {
    Check(xet::ValidateBucketFullName(move->FromId()).ok() &&
              xet::ValidateBucketFullName(move->ToId()).ok(),
          "move accepted an invalid id");
  }

  constexpr size_t kMaxPaths = 8;
  if (auto paths = xet::ParsePathsInfoBody(body, kMaxPaths); !FailsCleanly(paths)) {
    Check(paths->size() <= kMaxPaths, "more paths than the cap");
    std::set<std::string> seen;
    for (const std::string& p : *paths) {
      Check(xet::ValidateBucketPath(p).ok(), "an invalid path was accepted");
      Check(p.find('\0') == std::string::npos && p.front() != '/', "NUL or absolute path");
      Check(p != ".." && !p.starts_with("../") && p.find("/../") == std::string::npos &&
                !p.ends_with("/.."),
            "a '..' segment was accepted");
      Check(seen.insert(p).second, "duplicate path");
    }
  }

  constexpr size_t kMaxFiles = 8;
  if (auto hashes = xet::ParseBatchReconstructionBody(body, kMaxFiles); !FailsCleanly(hashes)) {
    Check(hashes->size() <= kMaxFiles, "more files than the cap");
    std::set<xet::Hash> seen;
    for (const xet::Hash& h : *hashes) {
      Check(xet::Hash::FromHex(h.ToHex()) == h, "hash does not round-trip");
      Check(seen.insert(h).second, "duplicate hash");
    }
  }
  heap.Check("json_bodies_fuzzer", size, 64, 1 << 20);
  return 0;
}
