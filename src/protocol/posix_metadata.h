// POSIX metadata kept with a bucket entry (a xetstore extension of the Hub's bucket API:
// the "posix" object of tree, paths-info and batch documents; stock Hub clients ignore it),
// and its JSON codec, shared by the client and the server:
//
//   {"mode": int, "uid": int, "gid": int, "atime"?: int (unix ms),
//    "target"?: string (symbolic links only), "rdev"?: int (device nodes only),
//    "xattrs"?: {"name": "base64 value", ...}}
//
// `mode` is st_mode with its type bits: S_IFREG (files), S_IFDIR (explicit directory
// entries), S_IFLNK (symbolic links: their entry is the empty file, their target
// `target`), or a special file, whose entry is the empty file too: S_IFIFO, S_IFSOCK,
// S_IFCHR or S_IFBLK (device nodes, with their device number `rdev`); plus permission bits
// 07777. Every parser here is bounded and never throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace xet {

inline constexpr uint32_t kPosixTypeMask = 0170000;
inline constexpr uint32_t kPosixRegular = 0100000;
inline constexpr uint32_t kPosixDirectory = 0040000;
inline constexpr uint32_t kPosixSymlink = 0120000;
inline constexpr uint32_t kPosixFifo = 0010000;
inline constexpr uint32_t kPosixCharDevice = 0020000;
inline constexpr uint32_t kPosixBlockDevice = 0060000;
inline constexpr uint32_t kPosixSocket = 0140000;
inline constexpr uint32_t kPosixPermissionMask = 07777;

inline constexpr size_t kMaxXattrNameBytes = 255;
inline constexpr size_t kMaxXattrValueBytes = 64 << 10;  // decoded bytes
inline constexpr size_t kMaxXattrs = 64;
inline constexpr size_t kMaxSymlinkTargetBytes = 4095;
// Largest device number: st_rdev as Linux reports it (glibc's makedev encoding of a 12-bit
// major and a 20-bit minor fills 32 bits; FUSE carries 32 bits too).
inline constexpr uint64_t kMaxPosixRdev = 0xFFFFFFFFu;
// Longest "posix" object, as EncodePosixJson writes it.
inline constexpr size_t kMaxPosixJsonBytes = 128 << 10;
// Latest accepted atime: 9999-12-31T23:59:59.999Z (the batch's mtime bound).
inline constexpr int64_t kMaxPosixTimeMs = 253'402'300'799'999;

struct PosixMetadata {
  uint32_t mode = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  int64_t atime_ms = 0;  // 0 = unknown
  std::string target;    // symbolic links only
  // Extended attributes, name -> value (values are bytes; base64 on the wire), sorted by
  // name, names unique.
  std::vector<std::pair<std::string, std::string>> xattrs;
  uint32_t rdev = 0;  // device nodes (S_IFCHR, S_IFBLK) only: st_rdev

  uint32_t type() const { return mode & kPosixTypeMask; }
  bool IsRegular() const { return type() == kPosixRegular; }
  bool IsDirectory() const { return type() == kPosixDirectory; }
  bool IsSymlink() const { return type() == kPosixSymlink; }
  bool IsDevice() const { return type() == kPosixCharDevice || type() == kPosixBlockDevice; }
  // FIFOs, sockets and device nodes.
  bool IsSpecial() const { return IsDevice() || type() == kPosixFifo || type() == kPosixSocket; }
  // Entries of this type have no content: the entry is the empty file (symbolic links and
  // special files). Regular files and directories are the other types.
  bool IsContentless() const { return IsSymlink() || IsSpecial(); }
  friend bool operator==(const PosixMetadata&, const PosixMetadata&) = default;
};

// OK when `p` keeps every rule: type bits one of S_IFREG/S_IFDIR/S_IFLNK/S_IFIFO/S_IFSOCK/
// S_IFCHR/S_IFBLK and no bits outside type | 07777; a target (1..4095 bytes, no NUL)
// exactly for symbolic links; rdev 0 unless a device node (S_IFCHR, S_IFBLK); atime
// in 0..kMaxPosixTimeMs; at most 64 xattrs, names 1..255 bytes of valid UTF-8 without NUL,
// sorted and unique, values at most 64 KiB; the encoding at most 128 KiB.
// InvalidArgument naming the broken rule otherwise.
Status ValidatePosix(const PosixMetadata& p);

// The "posix" object `j` (a parsed JSON value) as metadata, validated by ValidatePosix.
// Unknown fields are ignored. InvalidArgument ("posix: ...") on a wrong type, a missing
// mode/uid/gid, bad base64, an "rdev" field (even 0) on anything but a device node, an
// rdev above kMaxPosixRdev, or any rule of ValidatePosix.
Result<PosixMetadata> PosixFromJson(const nlohmann::json& j);

// The object for a valid `p`; optional fields (atime 0, empty target, no xattrs) omitted;
// "rdev" written for every device node (even 0), never for anything else.
nlohmann::json PosixToJson(const PosixMetadata& p);
// PosixToJson as compact JSON text (keys in a fixed order; what the limit measures).
std::string EncodePosixJson(const PosixMetadata& p);
// Text from EncodePosixJson (or any JSON text of the object) back to metadata. Refuses
// text longer than kMaxPosixJsonBytes or nesting deeper than 2 before parsing it.
Result<PosixMetadata> DecodePosixJson(std::string_view text);

}  // namespace xet
