// libFuzzer target: NDJSON bucket batch bodies (server/hub/batch_request.h).
//
// Input: the body, parsed for bucket "ns/self" with a small operation cap (so the cap is
// reached) and with the default one.
// Properties:
//   - ParseBatchRequest never crashes; a whole-body error carries a message and is
//     InvalidArgument or ResourceExhausted (the latter only when there are more non-blank
//     lines than the cap);
//   - one result per non-blank line; an invalid line has an error message and no
//     operation; a valid one has no error, and its fields obey the rules: every path
//     passes ValidateBucketPath (so it is relative, has no '.'/'..' segment, no NUL, no
//     '\\'), a copy's source is "" or a valid other bucket (never this one, for prefix
//     copies) or this one, a move's ends do not contain each other, a content type is
//     printable ASCII of at most 255 bytes, an mtime lies in the accepted span, a "posix"
//     object passes ValidatePosix and its type fits the operation (a symbolic link's file
//     is the empty one);
//   - heap growth stays linear in the input (blank lines cost nothing).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz/support/heap_meter.h"
#include "fuzz/support/property_check.h"
#include "protocol/bucket_path.h"
#include "protocol/posix_metadata.h"
#include "server/hub/batch_request.h"

namespace {

constexpr xet::fuzz::PropertyCheck Check("batch_request_fuzzer");

constexpr std::string_view kSelf = "ns/self";

size_t NonBlankLines(std::string_view body) {
  size_t n = 0;
  while (!body.empty()) {
    const size_t nl = body.find('\n');
    std::string_view line = body.substr(0, nl);
    body = nl == std::string_view::npos ? std::string_view() : body.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") != std::string_view::npos) ++n;
  }
  return n;
}

bool Contains(std::string_view dir, std::string_view x) {
  return x == dir || (x.size() > dir.size() && x.starts_with(dir) && x[dir.size()] == '/');
}

void CheckOp(const xet::BatchRequestOp& line) {
  if (!line.op) {
    Check(!line.error.empty(), "invalid line without an error");
    return;
  }
  Check(line.error.empty(), "valid line with an error");
  const xet::BucketOp& op = *line.op;
  using Kind = xet::BucketOp::Kind;
  switch (op.kind) {
    case Kind::kAddFile:
      Check(op.content_type.size() <= xet::kMaxContentTypeBytes, "content type too long");
      for (char c : op.content_type) Check(c >= 0x20 && c <= 0x7E, "content type not printable");
      Check(op.mtime_ms >= 0 && op.mtime_ms <= 253'402'300'799'999, "mtime out of span");
      if (op.posix) {
        Check(xet::ValidatePosix(*op.posix).ok(), "invalid posix accepted");
        Check(!op.posix->IsDirectory(), "addFile with a directory's posix");
        Check(!op.posix->IsContentless() || op.file_hash.IsZero(),
              "symbolic link or special file with content");
      }
      [[fallthrough]];
    case Kind::kDeleteFile:
      Check(xet::ValidateBucketPath(op.path).ok(), "an invalid path was accepted");
      Check(line.path == op.path, "reported path differs");
      Check(op.source_bucket.empty(), "source bucket on a non-copy");
      break;
    case Kind::kCopyFile:
      Check(xet::ValidateBucketPath(op.path).ok(), "an invalid path was accepted");
      Check(line.path == op.path, "reported path differs");
      Check(xet::ValidateBucketFullName(op.source_bucket).ok(), "copy without a valid source");
      break;
    case Kind::kCopyPrefix:
    case Kind::kMovePrefix:
      Check(xet::ValidateBucketPath(op.from).ok() && xet::ValidateBucketPath(op.to).ok(),
            "an invalid prefix was accepted");
      Check(line.path == op.from, "reported path differs from \"from\"");
      if (op.kind == Kind::kMovePrefix) {
        Check(op.source_bucket.empty(), "move with a source bucket");
        Check(!op.posix, "move with posix");
        Check(!Contains(op.from, op.to) && !Contains(op.to, op.from), "move into itself");
      } else {
        Check(op.source_bucket != kSelf, "prefix copy names this bucket as its source");
        Check(op.source_bucket.empty() || xet::ValidateBucketFullName(op.source_bucket).ok(),
              "copy from an invalid bucket");
      }
      break;
    case Kind::kAddDirectory:
    case Kind::kSetMetadata:
      Check(xet::ValidateBucketPath(op.path).ok(), "an invalid path was accepted");
      Check(line.path == op.path, "reported path differs");
      Check(op.mtime_ms >= 0 && op.mtime_ms <= 253'402'300'799'999, "mtime out of span");
      Check(op.kind == Kind::kAddDirectory || op.posix.has_value(), "setMetadata without posix");
      if (op.posix) Check(xet::ValidatePosix(*op.posix).ok(), "invalid posix accepted");
      Check(op.kind == Kind::kSetMetadata || !op.posix || op.posix->IsDirectory(),
            "addDirectory with a file's posix");
      break;
  }
}

void Run(std::string_view body, size_t max_ops) {
  auto result = xet::ParseBatchRequest(body, kSelf, max_ops);
  const size_t lines = NonBlankLines(body);
  if (!result.ok()) {
    Check(!result.status().message().empty(), "error without a message");
    const auto code = result.status().code();
    Check(code == xet::Status::Code::kInvalidArgument ||
              (code == xet::Status::Code::kResourceExhausted && lines > max_ops),
          "unexpected error code");
    return;
  }
  Check(result->size() == lines, "one result per non-blank line");
  for (const auto& line : *result) CheckOp(line);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  xet::fuzz::HeapScope heap;
  Run(body, 4);
  Run(body, xet::kMaxBatchOps);
  // An entry of the result is ~280 bytes plus its error text, and "{}\n" (3 bytes) makes
  // one: up to ~100 bytes of heap per input byte are the result itself.
  heap.Check("batch_request_fuzzer", size, 128, 1 << 20);
  return 0;
}
