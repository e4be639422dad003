#include "common/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "common/errno_status.h"
#include "common/unique_fd.h"

namespace xet {
namespace {

constexpr std::string_view kTempInfix = ".tmp-";

Status Errno(const std::string& what) { return StatusFromErrno(what, errno); }

// The pid of a temporary's name suffix ("123" of ".name.tmp-123"); nullopt if not digits.
std::optional<pid_t> TemporaryPid(std::string_view file_name) {
  const size_t at = file_name.rfind(kTempInfix);
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view digits = file_name.substr(at + kTempInfix.size());
  if (digits.empty() || digits.size() > 9) return std::nullopt;
  pid_t pid = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    pid = pid * 10 + (c - '0');
  }
  return pid;
}

}  // namespace

Status WriteFileAtomically(const std::string& path, const std::string& data, mode_t mode) {
  const std::filesystem::path target(path);
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  const std::string tmp = (dir / ("." + target.filename().string() + std::string(kTempInfix) +
                                  std::to_string(::getpid())))
                              .string();
  {
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode));
    if (fd.get() < 0) return Errno("create " + tmp);
    if (::fchmod(fd.get(), mode) != 0) return Errno("chmod " + tmp);
    size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::write(fd.get(), data.data() + done, data.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        const Status st = Errno("write " + tmp);
        ::unlink(tmp.c_str());
        return st;
      }
      done += static_cast<size_t>(n);
    }
    if (::fsync(fd.get()) != 0) {
      const Status st = Errno("fsync " + tmp);
      ::unlink(tmp.c_str());
      return st;
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const Status st = Errno("rename to " + path);
    ::unlink(tmp.c_str());
    return st;
  }
  UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dfd.get() < 0 || ::fsync(dfd.get()) != 0) return Errno("fsync directory " + dir.string());
  return Status::Ok();
}

std::optional<std::string> AtomicWriteTarget(std::string_view file_name) {
  if (file_name.size() < 2 || file_name.front() != '.' || !TemporaryPid(file_name)) {
    return std::nullopt;
  }
  const std::string_view name = file_name.substr(1, file_name.rfind(kTempInfix) - 1);
  if (name.empty()) return std::nullopt;
  return std::string(name);
}

void RemoveStaleAtomicWriteTemporaries(const std::string& path) {
  const std::filesystem::path target(path);
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  const std::string name = target.filename().string();
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::string file = it->path().filename().string();
    if (AtomicWriteTarget(file) != name) continue;
    const pid_t pid = *TemporaryPid(file);
    // kill(pid, 0) fails with ESRCH only when no such process exists.
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    ::unlink(it->path().c_str());
  }
}

Result<std::string> ReadSmallFile(const std::string& path, size_t max_bytes) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return Status::NotFound(path + ": no such file");
    return Errno("open " + path);
  }
  std::string out;
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("read " + path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) return Status::ResourceExhausted(path + ": file too large");
  }
  return out;
}

}  // namespace xet
