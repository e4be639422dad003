// Mapping of Status codes to HTTP answers, shared by every route module.
#pragma once

#include "common/status.h"
#include "http/message.h"

namespace xet {

// 400 InvalidArgument/Corruption/OutOfRange, 401 Unauthenticated, 403 PermissionDenied,
// 404 NotFound, 409 AlreadyExists, 413 ResourceExhausted, 501 Unimplemented, 503
// Unavailable, 507 InsufficientStorage, 500 otherwise (IoError included).
int HttpStatusFor(const Status& status);

// {"error": message} with HttpStatusFor(status). A 507 says "insufficient storage: " and the
// status message (the storage decorators make it name the full disk without paths); an
// IoError says "storage I/O error on the server; see the server log"; other 5xx errors get
// a generic message (details go to the log, not to the client).
HttpResponse ErrorResponse(const Status& status);

}  // namespace xet
