// Mapping of Status codes to HTTP answers, shared by every route module.
#pragma once

#include "common/status.h"
#include "server/http.h"

namespace xet {

// 400 InvalidArgument/Corruption/OutOfRange, 401 Unauthenticated, 403 PermissionDenied,
// 404 NotFound, 413 ResourceExhausted, 501 Unimplemented, 500 otherwise.
int HttpStatusFor(const Status& status);

// {"error": message} with HttpStatusFor(status). Internal errors get a generic message
// (details go to the log, not to the client).
HttpResponse ErrorResponse(const Status& status);

}  // namespace xet
