#include "cli/remote_failure.h"

#include <cerrno>
#include <cstring>
#include <string>

#include "cli/output.h"

namespace xet::cli {

bool IsServerDiskFull(const Status& status) {
  return status.code() == Status::Code::kInsufficientStorage &&
         status.message().ends_with("(HTTP 507)");
}

bool IsServerDiskFailure(const Status& status) {
  return IsServerDiskFull(status) &&
         status.message().find("I/O error on the data disk") != std::string::npos;
}

bool IsDiskFull(const Status& status) {
  if (status.code() == Status::Code::kInsufficientStorage) return true;
  if (status.code() != Status::Code::kIoError) return false;
  const std::string& msg = status.message();
  return msg.find(std::strerror(ENOSPC)) != std::string::npos ||
         msg.find(std::strerror(EDQUOT)) != std::string::npos;
}

int ExitCodeFor(const Status& status) {
  using Code = Status::Code;
  switch (status.code()) {
    case Code::kOk:
      return kExitOk;
    case Code::kInvalidArgument:
      return kExitUsage;
    case Code::kNotFound:
      return kExitNotFound;
    case Code::kUnauthenticated:
    case Code::kPermissionDenied:
      return kExitPermission;
    case Code::kUnavailable:
      return kExitUnavailable;
    case Code::kCancelled:
      return kExitInterrupted;
    case Code::kInsufficientStorage:
      return kExitDiskFull;
    case Code::kIoError:
      return IsDiskFull(status) ? kExitDiskFull : kExitFailure;
    default:
      return kExitFailure;
  }
}

int ReportLocalFailure(const Status& status) {
  if (IsDiskFull(status)) {
    PrintError("disk full: " + status.message(), "free some disk space and run the command again");
  } else {
    PrintError(status.message().empty() ? status.ToString() : status.message());
  }
  return ExitCodeFor(status);
}

int ReportRemoteFailure(const Status& status, std::string_view endpoint) {
  using Code = Status::Code;
  std::string hint;
  switch (status.code()) {
    case Code::kNotFound:
      hint =
          "`xetstore buckets list` shows the buckets your token can read, `xetstore ls` what "
          "is in one";
      break;
    case Code::kUnauthenticated:
      hint = "pass a valid token with --token or XETSTORE_TOKEN (or HF_TOKEN)";
      break;
    case Code::kPermissionDenied:
      hint =
          "the token lacks the permission: writing needs a write token whose scopes include the "
          "bucket (`xetstore token create --permission write --scope NS/BUCKET`)";
      break;
    case Code::kUnavailable:
      hint = "is `xetstore serve` running at " + std::string(endpoint) +
             "? set --endpoint or XETSTORE_ENDPOINT";
      break;
    case Code::kCorruption:
      hint =
          "the stored data or the transfer is damaged; nothing was put in place (a .xetpart "
          "may remain). Run the command again; if it fails the same way, the server's copy is "
          "damaged";
      break;
    case Code::kIoError:
    case Code::kInsufficientStorage:
      if (IsServerDiskFull(status) && IsServerDiskFailure(status)) {
        hint = "the server's data disk failed a write; check the server's log and its disk";
      } else if (IsServerDiskFull(status)) {
        hint = "the server's disk is full; free space on the server and retry";
      } else if (IsDiskFull(status)) {
        hint = "free some disk space and run the command again";
      }
      break;
    default:
      break;
  }
  if (status.code() == Code::kCancelled) {
    PrintError("interrupted");
  } else if (IsServerDiskFull(status)) {
    PrintError(
        std::string(IsServerDiskFailure(status) ? "server storage error: " : "server disk full: ") +
            status.message(),
        hint);
  } else if (IsDiskFull(status)) {
    PrintError("disk full: " + status.message(), hint);
  } else if (status.code() == Code::kCorruption) {
    PrintError("corrupted data: " + status.message(), hint);
  } else {
    PrintError(status.message().empty() ? status.ToString() : status.message(), hint);
  }
  return ExitCodeFor(status);
}

}  // namespace xet::cli
