#include "common/errno_status.h"

#include <cerrno>
#include <cstring>
#include <string>

namespace xet {

bool IsNoSpaceErrno(int err) { return err == ENOSPC || err == EDQUOT; }

Status StatusFromErrno(std::string_view what, int err) {
  std::string msg(what);
  msg.append(": ").append(std::strerror(err));
  return IsNoSpaceErrno(err) ? Status::InsufficientStorage(msg) : Status::IoError(msg);
}

}  // namespace xet
