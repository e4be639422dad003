#include "common/status.h"

namespace xet {

const char* CodeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk:
      return "OK";
    case Status::Code::kInvalidArgument:
      return "InvalidArgument";
    case Status::Code::kNotFound:
      return "NotFound";
    case Status::Code::kCorruption:
      return "Corruption";
    case Status::Code::kIoError:
      return "IoError";
    case Status::Code::kOutOfRange:
      return "OutOfRange";
    case Status::Code::kResourceExhausted:
      return "ResourceExhausted";
    case Status::Code::kUnimplemented:
      return "Unimplemented";
    case Status::Code::kInternal:
      return "Internal";
    case Status::Code::kUnauthenticated:
      return "Unauthenticated";
    case Status::Code::kPermissionDenied:
      return "PermissionDenied";
    case Status::Code::kAlreadyExists:
      return "AlreadyExists";
    case Status::Code::kUnavailable:
      return "Unavailable";
    case Status::Code::kCancelled:
      return "Cancelled";
    case Status::Code::kInsufficientStorage:
      return "InsufficientStorage";
  }
  return "Unknown";
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return msg_ ? *msg_ : kEmpty;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(CodeName(code_)) + ": " + message();
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  std::string msg(context);
  msg += ": ";
  msg += message();
  return Status(code_, msg);
}

}  // namespace xet
