// libFuzzer target: bucket names and paths (protocol/bucket_path.h), bucket ids
// (ValidateBucketFullName, protocol/bucket_path.h) and the client's hf:// remote paths
// (client/hub/remote_path.h).
//
// Input: the string, checked by every validator (and prefixed with "hf://buckets/" for
// the remote-path parser, so that parser gets past its scheme).
// Properties:
//   - nothing crashes; a rejection is InvalidArgument with a one-line message (no
//     control characters for the client's messages, which are printed);
//   - an accepted name is 1..96 bytes of [A-Za-z0-9._-], no '..', no '.'/'-' at the ends;
//   - an accepted path is 1..1024 bytes of valid UTF-8 (checked independently, by
//     nlohmann::json's strict encoder), relative, without NUL/control bytes or '\\', and
//     with no empty, "." or ".." segment;
//   - NormalizeBucketPrefix returns "" or a valid path, equal to the input minus at most
//     one trailing '/', and is idempotent;
//   - ParseRemotePath accepts only valid names and a valid or empty path, and its
//     ToString() form parses back to the same RemotePath;
//   - heap growth stays linear in the input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "client/hub/remote_path.h"
#include "fuzz/support/heap_meter.h"
#include "fuzz/support/property_check.h"
#include "protocol/bucket_path.h"
#include "server/hub/batch_request.h"

namespace {

constexpr xet::fuzz::PropertyCheck Check("bucket_path_fuzzer");

void CheckRejection(const xet::Status& st, bool printable) {
  Check(st.code() == xet::Status::Code::kInvalidArgument, "rejection is not InvalidArgument");
  Check(!st.message().empty(), "rejection without a message");
  if (printable) {
    for (char c : st.message()) {
      Check(static_cast<unsigned char>(c) >= 0x20 && c != 0x7F, "control byte in a message");
    }
  }
}

bool ValidUtf8(std::string_view s) {
  try {
    (void)nlohmann::json(std::string(s)).dump();
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

void CheckName(std::string_view name, const xet::Status& st) {
  if (!st.ok()) return CheckRejection(st, false);
  Check(!name.empty() && name.size() <= xet::kMaxBucketNameBytes, "name length");
  for (char c : name) {
    Check((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
              c == '_' || c == '-',
          "name character");
  }
  Check(name.find("..") == std::string_view::npos, "'..' in a name");
  Check(name.front() != '.' && name.front() != '-' && name.back() != '.' && name.back() != '-',
        "name starts or ends with '.' or '-'");
}

void CheckPath(std::string_view path, const xet::Status& st) {
  if (!st.ok()) return CheckRejection(st, false);
  Check(!path.empty() && path.size() <= xet::kMaxBucketPathBytes, "path length");
  Check(ValidUtf8(path), "an accepted path is not valid UTF-8");
  for (char c : path) {
    const auto u = static_cast<unsigned char>(c);
    Check(u >= 0x20 && u != 0x7F && c != '\\', "control byte or backslash in a path");
  }
  Check(path.front() != '/', "absolute path");
  size_t start = 0;
  while (true) {
    const size_t end = path.find('/', start);
    const std::string_view seg = path.substr(start, end - start);
    Check(!seg.empty() && seg != "." && seg != "..", "empty, '.' or '..' segment");
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
}

void CheckPrefix(std::string_view prefix) {
  auto r = xet::NormalizeBucketPrefix(prefix);
  if (!r.ok()) return CheckRejection(r.status(), false);
  std::string_view trimmed = prefix;
  if (!trimmed.empty() && trimmed.back() == '/') trimmed.remove_suffix(1);
  Check(*r == trimmed, "normalized prefix is not the input minus one trailing '/'");
  if (!r->empty()) CheckPath(*r, xet::ValidateBucketPath(*r));
  auto again = xet::NormalizeBucketPrefix(*r);
  Check(again.ok() && *again == *r, "normalization is not idempotent");
}

void CheckRemote(const std::string& arg) {
  auto r = xet::ParseRemotePath(arg);
  if (!r.ok()) return CheckRejection(r.status(), true);
  CheckName(r->ns, xet::ValidateBucketName(r->ns));
  CheckName(r->bucket, xet::ValidateBucketName(r->bucket));
  if (!r->path.empty()) CheckPath(r->path, xet::ValidateBucketPath(r->path));
  Check(xet::ValidateBucketFullName(r->BucketId()).ok(), "bucket id invalid");
  auto again = xet::ParseRemotePath(r->ToString());
  Check(again.ok() && again->ns == r->ns && again->bucket == r->bucket && again->path == r->path &&
            again->trailing_slash == r->trailing_slash,
        "ToString() does not parse back to the same path");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view s(reinterpret_cast<const char*>(data), size);
  xet::fuzz::HeapScope heap;
  CheckName(s, xet::ValidateBucketName(s));
  CheckPath(s, xet::ValidateBucketPath(s));
  CheckPrefix(s);
  if (auto st = xet::ValidateBucketFullName(s); st.ok()) {
    const size_t slash = s.find('/');
    CheckName(s.substr(0, slash), xet::ValidateBucketName(s.substr(0, slash)));
    CheckName(s.substr(slash + 1), xet::ValidateBucketName(s.substr(slash + 1)));
  } else {
    CheckRejection(st, false);
  }
  CheckRemote(std::string(s));
  CheckRemote("hf://buckets/" + std::string(s));
  heap.Check("bucket_path_fuzzer", size, 64, 1 << 20);
  return 0;
}
