// libFuzzer target: the plan file of `xetstore sync --apply FILE`
// (client/sync/sync_plan_json.h), untrusted input: it may have been edited, or come from
// someone else.
//
// Input: the file's contents.
// Properties:
//   - nothing crashes or throws; a refused file is InvalidArgument with a message;
//   - an accepted plan keeps the parser's contract: every op's path is a valid bucket path
//     and no path is named twice;
//   - an accepted plan is a fixed point of writing and reading: written as JSON lines it
//     reads back as the same plan, and writes the same text again;
//   - heap growth stays linear in the input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "client/sync/sync_plan_json.h"
#include "fuzz/support/heap_meter.h"
#include "fuzz/support/property_check.h"
#include "protocol/bucket_path.h"

namespace {

constexpr xet::fuzz::PropertyCheck Check("sync_plan_fuzzer");

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  xet::fuzz::HeapScope heap;
  auto plan = xet::SyncPlanFromJsonLines(text);
  if (!plan.ok()) {
    Check.Refusal(plan.status(), xet::Status::Code::kInvalidArgument);
  } else {
    std::set<std::string_view> paths;
    for (const xet::SyncOp& op : plan->ops) {
      Check(xet::ValidateBucketPath(op.path).ok(), "an op with an invalid path");
      Check(paths.insert(op.path).second, "a path named by two ops");
    }
    const std::string written = xet::SyncPlanToJsonLines(*plan);
    auto again = xet::SyncPlanFromJsonLines(written);
    Check(again.ok(), "a written plan does not read back");
    Check(again->direction == plan->direction && again->source == plan->source &&
              again->destination == plan->destination && again->ops == plan->ops,
          "a written plan reads back different");
    Check(xet::SyncPlanToJsonLines(*again) == written, "writing is not a fixed point");
  }
  heap.Check("sync_plan_fuzzer", size, 64, 1 << 20);
  return 0;
}
