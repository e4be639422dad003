#include "server/http_status.h"

#include "server/read_only_stores.h"

namespace xet {

int HttpStatusFor(const Status& status) {
  switch (status.code()) {
    case Status::Code::kOk:
      return 200;
    case Status::Code::kInvalidArgument:
    case Status::Code::kCorruption:
    case Status::Code::kOutOfRange:
      return 400;
    case Status::Code::kUnauthenticated:
      return 401;
    case Status::Code::kPermissionDenied:
      return 403;
    case Status::Code::kNotFound:
      return 404;
    case Status::Code::kAlreadyExists:
      return 409;
    case Status::Code::kUnavailable:
      return 503;
    case Status::Code::kResourceExhausted:
      return 413;
    case Status::Code::kUnimplemented:
      return 501;
    case Status::Code::kInsufficientStorage:
      return 507;
    case Status::Code::kIoError:
    case Status::Code::kInternal:
    case Status::Code::kCancelled:  // a handler that gave up: nothing the client did wrong
      return 500;
  }
  return 500;
}

HttpResponse ErrorResponse(const Status& status) {
  const int code = HttpStatusFor(status);
  if (code == 507) return HttpResponse::Error(code, "insufficient storage: " + status.message());
  if (IsReadOnlyRefusal(status)) return HttpResponse::Error(code, status.message());
  if (status.code() == Status::Code::kIoError) {
    return HttpResponse::Error(code, "storage I/O error on the server; see the server log");
  }
  if (code >= 500 && code != 501) {
    return HttpResponse::Error(code, "internal error while handling the request; see server log");
  }
  return HttpResponse::Error(code, status.message());
}

}  // namespace xet
