#!/usr/bin/env python3
"""POSIX conformance suite for a directory on any file system (python3 stdlib only).

Written for `xetstore mount`, runnable against any directory (ext4, tmpfs, a FUSE mount):

  tests/mount/posix_conformance.py DIR                     # strict POSIX (what ext4 does)
  tests/mount/posix_conformance.py --profile xetstore DIR  # the mount's documented deviations
  tests/mount/posix_conformance.py --list                  # the case names
  tests/mount/posix_conformance.py -k rename DIR           # only cases whose name has "rename"

Every case runs in its own fresh directory under DIR/posix-<pid>/ (removed at the end unless
--keep). Each case is a named function holding many assertions; the output is one line per
case (`ok NAME`, `FAIL NAME: what: expected ..., got ...`, `skip NAME: reason`), then the
number of assertions, then the closing line `N passed, N failed[, N skipped]`. Exit 1 on any
failure, 2 on a usage error.

Permission checks for an unprivileged user run in a forked child that drops to uid/gid 65534
(setgroups, setgid, setuid); they need root and are skipped (with the reason) otherwise. On a
FUSE mount they need `allow_other` and `default_permissions`. DIR must be searchable by uid
65534: when it is not, the suite adds o+x to DIR for the run and restores its mode after.

Deviations of a profile (unsupported operations and their errno, timestamp granularity, what
is not stored) are listed in one table, PROFILES below, and printed at the start of a run.
"""

import argparse
import ctypes
import errno
import os
import pickle
import shutil
import socket
import stat
import sys
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fs_watchdog import Watchdog  # noqa: E402

NOBODY = 65534
E = errno

# ---------------------------------------------------------------------------------------------
# Profiles: every deviation from strict POSIX in one place.


class Profile:
    def __init__(self, name, doc, unsupported=None, time_granularity_ns=1, ctime_on_metadata=True,
                 dir_nlink=True, skip=None):
        self.name = name
        self.doc = doc
        # operation -> (accepted errnos, why): the operation must fail with one of the errnos
        # and leave nothing behind.
        self.unsupported = unsupported or {}
        # Stored timestamps are rounded to this many ns: an explicit time T set with
        # utimensat reads back as T' with |T - T'| < granularity.
        self.time_granularity_ns = time_granularity_ns
        # Whether a metadata-only change (chmod, chown, utimensat, rename, link) updates ctime.
        self.ctime_on_metadata = ctime_on_metadata
        # Whether a directory's st_nlink is 2 + its number of subdirectories.
        self.dir_nlink = dir_nlink
        # case name -> reason: cases that do not apply under this profile.
        self.skip = skip or {}

    def describe(self):
        lines = ["profile %s: %s" % (self.name, self.doc)]
        for op, (errs, why) in sorted(self.unsupported.items()):
            lines.append("  %s: fails with %s (%s)"
                         % (op, "/".join(errno.errorcode[e] for e in errs), why))
        lines.append("  timestamp granularity: %d ns" % self.time_granularity_ns)
        if not self.ctime_on_metadata:
            lines.append("  ctime: not checked after metadata-only changes (chmod, chown, "
                         "utimensat, rename): the bucket stores no ctime")
        if not self.dir_nlink:
            lines.append("  directory st_nlink: not checked (need not count subdirectories)")
        for name, why in sorted(self.skip.items()):
            lines.append("  case %s: skipped (%s)" % (name, why))
        return lines


PROFILES = {
    "strict": Profile("strict", "strict POSIX as Linux ext4/tmpfs implement it (the default)"),
    "xetstore": Profile(
        "xetstore",
        "xetstore mount: a bucket entry is one path with POSIX metadata (mode, uid, gid, mtime, "
        "atime in unix ms, symlink target, device number, xattrs)",
        unsupported={
            "link": ((E.EPERM, E.ENOTSUP, E.ENOSYS),
                     "hard links: a bucket entry has exactly one path, no inode to share"),
            "non_utf8_name": ((E.EINVAL, E.EILSEQ),
                              "a name that is not UTF-8: bucket paths are JSON strings"),
            "control_or_backslash_name": ((E.EINVAL,),
                                          "a name with a control character (tab, newline, "
                                          "...) or a backslash: bucket paths refuse them, as "
                                          "the Hub's do"),
        },
        time_granularity_ns=1_000_000,
        ctime_on_metadata=False,
        dir_nlink=False,
    ),
}

# ---------------------------------------------------------------------------------------------
# libc calls the os module does not expose (utimensat with UTIME_NOW/UTIME_OMIT, renameat2).

_libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD = -100
AT_SYMLINK_NOFOLLOW = 0x100
UTIME_NOW = (1 << 30) - 1
UTIME_OMIT = (1 << 30) - 2
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def _ts(v):
    if v == "now":
        return _Timespec(0, UTIME_NOW)
    if v == "omit":
        return _Timespec(0, UTIME_OMIT)
    return _Timespec(v // 1_000_000_000, v % 1_000_000_000)


def utimensat(path, atime, mtime, nofollow=False):
    """atime/mtime: ns since the epoch, "now" or "omit". Raises OSError."""
    times = (_Timespec * 2)(_ts(atime), _ts(mtime))
    rc = _libc.utimensat(AT_FDCWD, os.fsencode(path), times,
                         AT_SYMLINK_NOFOLLOW if nofollow else 0)
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), path)


def renameat2(src, dst, flags):
    """Raises OSError; ENOSYS when neither libc nor the kernel has renameat2."""
    fn = getattr(_libc, "renameat2", None)
    if fn is None:
        raise OSError(E.ENOSYS, "no renameat2 in libc")
    rc = fn(AT_FDCWD, os.fsencode(src), AT_FDCWD, os.fsencode(dst), ctypes.c_uint(flags))
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), src)


# ---------------------------------------------------------------------------------------------
# Running a function as an unprivileged user.


def as_user(fn, uid=NOBODY, gid=NOBODY, groups=()):
    """Runs fn() in a forked child after setgroups(groups), setgid(gid), setuid(uid).
    Returns ("ok", value) / ("err", errno) / ("exc", text). value must pickle."""
    sys.stdout.flush()
    sys.stderr.flush()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never returns
        try:
            os.close(r)
            try:
                os.setgroups(list(groups))
                os.setgid(gid)
                os.setuid(uid)
                try:
                    res = ("ok", fn())
                except OSError as e:
                    res = ("err", e.errno)
                data = pickle.dumps(res)
            except BaseException as e:  # noqa: BLE001 - reported to the parent
                data = pickle.dumps(("exc", repr(e)))
            view = memoryview(data)
            while view:
                view = view[os.write(w, view):]
        finally:
            os._exit(0)
    os.close(w)
    chunks = []
    while True:
        b = os.read(r, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    os.waitpid(pid, 0)
    if not chunks:
        return ("exc", "child died without an answer")
    return pickle.loads(b"".join(chunks))


# ---------------------------------------------------------------------------------------------
# The test context.


class Skip(Exception):
    pass


class Abort(Exception):
    """A step the rest of the case depends on failed (already recorded)."""


def ename(e):
    return errno.errorcode.get(e, str(e)) if isinstance(e, int) else str(e)


def enames(es):
    return "/".join(ename(e) for e in es)


class T:
    """One case's context: its directory, the profile, and the assertions."""

    def __init__(self, name, directory, profile, opts, can_drop):
        self.name = name
        self.d = directory
        self.profile = profile
        self.opts = opts
        self.can_drop = can_drop
        self.failures = []
        self.asserts = 0

    # paths -----------------------------------------------------------------------------------
    def p(self, *parts):
        return os.path.join(self.d, *parts)

    def mkfile(self, name, data=b"", mode=0o644):
        path = self.p(name)
        fd = self.must(os.open, path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, mode,
                       what="create " + name)
        try:
            if data:
                self.must(os.write, fd, data, what="write " + name)
        finally:
            os.close(fd)
        return path

    def mkdir(self, name, mode=0o755):
        path = self.p(name)
        self.must(os.mkdir, path, mode, what="mkdir " + name)
        return path

    def read(self, path):
        with open(path, "rb") as f:
            return f.read()

    # assertions ------------------------------------------------------------------------------
    def fail(self, what, expected, got):
        self.failures.append("%s: expected %s, got %s" % (what, expected, got))

    def check(self, cond, what, expected, got):
        self.asserts += 1
        if not cond:
            self.fail(what, expected, got)
        return bool(cond)

    def eq(self, got, want, what):
        return self.check(got == want, what, repr(want), repr(got))

    def eq_mode(self, got, want, what):
        return self.check(got == want, what, "%04o" % want, "%04o" % got)

    def mode(self, path, want, what=None, follow=True):
        st = os.stat(path) if follow else os.lstat(path)
        return self.check(stat.S_IMODE(st.st_mode) == want, what or "mode of " + self.rel(path),
                          "%04o" % want, "%04o" % stat.S_IMODE(st.st_mode))

    def rel(self, path):
        return os.path.relpath(path, self.d) if path.startswith(self.d) else path

    def must(self, fn, *args, what=None, **kw):
        """Calls fn; on OSError records a failure and aborts the case."""
        self.asserts += 1
        try:
            return fn(*args, **kw)
        except OSError as e:
            self.fail(what or fn.__name__, "success", ename(e.errno))
            raise Abort() from e

    def ok(self, fn, *args, what=None, **kw):
        """Calls fn; on OSError records a failure and returns None (the case goes on)."""
        self.asserts += 1
        try:
            return fn(*args, **kw)
        except OSError as e:
            self.fail(what or fn.__name__, "success", ename(e.errno))
            return None

    def did(self, fn, *args, what=None, **kw):
        """Calls fn; True when it succeeded, else records a failure and returns False."""
        self.asserts += 1
        try:
            fn(*args, **kw)
            return True
        except OSError as e:
            self.fail(what or fn.__name__, "success", ename(e.errno))
            return False

    def err(self, want, fn, *args, what=None, **kw):
        """fn must raise OSError with errno in want (an int or a tuple)."""
        want = (want,) if isinstance(want, int) else tuple(want)
        self.asserts += 1
        try:
            r = fn(*args, **kw)
        except OSError as e:
            if e.errno not in want:
                self.fail(what or fn.__name__, enames(want), ename(e.errno))
            return
        if isinstance(r, int) and fn is os.open:
            os.close(r)
        self.fail(what or fn.__name__, enames(want), "success")

    def absent(self, path, what=None):
        self.asserts += 1
        try:
            os.lstat(path)
        except FileNotFoundError:
            return True
        self.fail(what or "%s absent" % self.rel(path), "ENOENT", "it exists")
        return False

    def exists(self, path, what=None):
        self.asserts += 1
        try:
            os.lstat(path)
            return True
        except OSError as e:
            self.fail(what or "%s exists" % self.rel(path), "it exists", ename(e.errno))
            return False

    # unprivileged ----------------------------------------------------------------------------
    def need_root(self, why):
        if os.geteuid() != 0:
            raise Skip("needs root: " + why)

    def need_drop(self):
        if not self.can_drop[0]:
            raise Skip(self.can_drop[1])

    def user_ok(self, fn, what, uid=NOBODY, gid=NOBODY, groups=()):
        self.need_drop()
        self.asserts += 1
        kind, val = as_user(fn, uid, gid, groups)
        if kind != "ok":
            self.fail(what + " (as uid %d)" % uid, "success", ename(val))
            return None
        return val

    def user_err(self, want, fn, what, uid=NOBODY, gid=NOBODY, groups=()):
        self.need_drop()
        want = (want,) if isinstance(want, int) else tuple(want)
        self.asserts += 1
        kind, val = as_user(fn, uid, gid, groups)
        if kind == "ok":
            self.fail(what + " (as uid %d)" % uid, enames(want), "success")
        elif kind == "exc" or val not in want:
            self.fail(what + " (as uid %d)" % uid, enames(want), ename(val))

    # profile ---------------------------------------------------------------------------------
    def unsupported(self, op):
        return self.profile.unsupported.get(op)

    def expect_unsupported(self, op, fn, *args, leaves=()):
        """Under a profile where op is unsupported: fn must fail with its errnos and the
        paths in `leaves` must not exist after. Returns True when op is unsupported."""
        dev = self.unsupported(op)
        if not dev:
            return False
        self.err(dev[0], fn, *args, what="%s (unsupported in profile %s)" % (op,
                                                                            self.profile.name))
        for path in leaves:
            self.absent(path, "%s left by a refused %s" % (self.rel(path), op))
        return True

    # time ------------------------------------------------------------------------------------
    def tick(self):
        """Lets the file-system clock move on, so a later timestamp is strictly greater."""
        time.sleep(self.opts.time_step)

    def later(self, before, after, what):
        return self.check(after > before, what, "> %d" % before, str(after))

    def same_time(self, got, want, what):
        g = self.profile.time_granularity_ns
        return self.check(abs(got - want) < g, what, "%d (granularity %d ns)" % (want, g), str(got))

    def near_now(self, got_ns, lo_ns, hi_ns, what):
        slack = int(self.opts.clock_slack * 1e9) + self.profile.time_granularity_ns
        return self.check(lo_ns - slack <= got_ns <= hi_ns + slack, what,
                          "within [%d, %d] +- %d ns" % (lo_ns, hi_ns, slack), str(got_ns))

    def ctime_later(self, before, after, what):
        """A ctime check after a metadata-only change (not checked when the profile says so)."""
        if self.profile.ctime_on_metadata:
            self.later(before, after, what)

    def nlink_dir(self, path, want, what=None):
        if self.profile.dir_nlink:
            self.eq(os.stat(path).st_nlink, want, what or "st_nlink of " + self.rel(path))


CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def area(name):
    return name.split("_", 1)[0]


# ---------------------------------------------------------------------------------------------
# Helpers used by many cases.


def write_at(path, off, data):
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, data, off)
    finally:
        os.close(fd)


def open_close(path, flags, mode=0o644):
    fd = os.open(path, flags, mode)
    os.close(fd)
    return True


def listdir_set(path):
    return sorted(os.listdir(path))


def ftype(path):
    m = os.lstat(path).st_mode
    for f, n in ((stat.S_ISREG, "file"), (stat.S_ISDIR, "dir"), (stat.S_ISLNK, "symlink"),
                 (stat.S_ISFIFO, "fifo"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "chr"),
                 (stat.S_ISBLK, "blk")):
        if f(m):
            return n
    return "other"


def open_dir_for_all(t, name="pub"):
    """A 0777 directory, so uid 65534 can create entries in it."""
    path = t.mkdir(name, 0o777)
    os.chmod(path, 0o777)
    return path


# ---------------------------------------------------------------------------------------------
# chmod

FILE_MODES = (0o000, 0o400, 0o600, 0o644, 0o640, 0o755, 0o777, 0o1755, 0o2755, 0o4755,
              0o6755, 0o7777, 0o4000, 0o0111)


@case
def chmod_file_modes(t):
    f = t.mkfile("f")
    for m in FILE_MODES:
        if t.did(os.chmod, f, m, what="chmod %04o" % m):
            t.mode(f, m, "mode after chmod %04o" % m)


@case
def chmod_dir_modes(t):
    d = t.mkdir("d")
    for m in (0o000, 0o700, 0o755, 0o777, 0o1777, 0o2755, 0o3777, 0o0711):
        if t.did(os.chmod, d, m, what="chmod dir %04o" % m):
            t.mode(d, m, "dir mode after chmod %04o" % m)
    t.eq(ftype(d), "dir", "type after chmods")


@case
def chmod_fchmod(t):
    f = t.mkfile("f", b"abc")
    fd = os.open(f, os.O_RDONLY)
    try:
        for m in (0o600, 0o751, 0o4711, 0o444):
            if t.did(os.fchmod, fd, m, what="fchmod %04o" % m):
                t.eq_mode(stat.S_IMODE(os.fstat(fd).st_mode), m, "fstat mode after fchmod %04o" % m)
                t.mode(f, m, "stat mode after fchmod %04o" % m)
    finally:
        os.close(fd)
    t.eq(t.read(f), b"abc", "content after chmods")


@case
def chmod_keeps_type_and_content(t):
    t.need_drop()  # root reads a mode-0 file
    f = t.mkfile("f", b"x" * 1000)
    os.chmod(f, 0o0)
    st = os.stat(f)
    t.eq(stat.S_ISREG(st.st_mode), True, "still a regular file")
    t.eq(st.st_size, 1000, "size after chmod 0")
    t.eq(t.read(f), b"x" * 1000, "root reads a mode-0 file")


@case
def chmod_follows_symlink(t):
    f = t.mkfile("target", mode=0o644)
    link = t.p("link")
    os.symlink("target", link)
    t.ok(os.chmod, link, 0o600, what="chmod through a symlink")
    t.mode(f, 0o600, "target mode changed through the link")
    t.eq(stat.S_ISLNK(os.lstat(link).st_mode), True, "link still a symlink")


@case
def chmod_errors(t):
    f = t.mkfile("f")
    t.err(E.ENOENT, os.chmod, t.p("missing"), 0o644, what="chmod missing")
    t.err(E.ENOENT, os.chmod, t.p("nodir", "x"), 0o644, what="chmod below a missing dir")
    t.err(E.ENOTDIR, os.chmod, t.p("f", "x"), 0o644, what="chmod below a file")
    os.symlink("missing", t.p("dangling"))
    t.err(E.ENOENT, os.chmod, t.p("dangling"), 0o644, what="chmod a dangling symlink")
    t.mode(f, 0o644)


@case
def chmod_updates_ctime(t):
    f = t.mkfile("f")
    before = os.stat(f)
    t.tick()
    os.chmod(f, 0o600)
    after = os.stat(f)
    t.ctime_later(before.st_ctime_ns, after.st_ctime_ns, "ctime after chmod")
    t.eq(after.st_mtime_ns, before.st_mtime_ns, "mtime unchanged by chmod")


@case
def chmod_nonowner_eperm(t):
    f = t.mkfile("f", mode=0o666)
    d = t.mkdir("d", 0o777)
    os.chmod(d, 0o777)
    t.user_err(E.EPERM, lambda: os.chmod(f, 0o777), "chmod another user's file")
    t.user_err(E.EPERM, lambda: os.chmod(d, 0o700), "chmod another user's dir")
    t.mode(f, 0o666, "mode after refused chmod")
    t.mode(d, 0o777, "dir mode after refused chmod")


@case
def chmod_owner_nonroot(t):
    f = t.mkfile("f", mode=0o644)
    os.chown(f, NOBODY, NOBODY)
    for m in (0o600, 0o000, 0o755, 0o4755, 0o1644):
        t.user_ok(lambda m=m: os.chmod(f, m), "owner chmod %04o" % m)
        t.mode(f, m, "mode after owner chmod %04o" % m)


@case
def chmod_nonroot_sgid_cleared(t):
    # Linux: a non-member of the file's group may not set S_ISGID; it is silently cleared.
    t.need_drop()
    f = t.mkfile("f", mode=0o644)
    os.chown(f, NOBODY, 0)
    t.user_ok(lambda: os.chmod(f, 0o2755), "owner chmod 2755 with a foreign group")
    t.mode(f, 0o0755, "S_ISGID dropped for a non-member")
    os.chown(f, NOBODY, NOBODY)
    t.user_ok(lambda: os.chmod(f, 0o2755), "owner chmod 2755 with its own group")
    t.mode(f, 0o2755, "S_ISGID kept for a member")


@case
def chmod_sticky_file_nonroot(t):
    # Linux lets the owner set S_ISVTX on a regular file (no meaning, kept).
    f = t.mkfile("f", mode=0o644)
    os.chown(f, NOBODY, NOBODY)
    t.user_ok(lambda: os.chmod(f, 0o1644), "owner chmod 1644")
    t.mode(f, 0o1644)


# ---------------------------------------------------------------------------------------------
# chown


@case
def chown_root(t):
    t.need_drop()  # root only: giving away files
    f = t.mkfile("f", b"data")
    for uid, gid, want in ((NOBODY, NOBODY, (NOBODY, NOBODY)), (0, -1, (0, NOBODY)),
                           (-1, 0, (0, 0)), (1234, 5678, (1234, 5678)), (-1, -1, (1234, 5678)),
                           (0, 0, (0, 0))):
        if t.did(os.chown, f, uid, gid, what="chown %d:%d" % (uid, gid)):
            st = os.stat(f)
            t.eq((st.st_uid, st.st_gid), want, "owner after chown %d:%d" % (uid, gid))
    t.eq(t.read(f), b"data", "content after chowns")


@case
def chown_dir_and_fchown(t):
    t.need_drop()
    d = t.mkdir("d")
    t.ok(os.chown, d, 4321, 8765, what="chown dir")
    st = os.stat(d)
    t.eq((st.st_uid, st.st_gid), (4321, 8765), "dir owner")
    f = t.mkfile("f")
    fd = os.open(f, os.O_RDONLY)
    try:
        t.ok(os.fchown, fd, 42, 43, what="fchown")
        st = os.fstat(fd)
        t.eq((st.st_uid, st.st_gid), (42, 43), "owner after fchown")
    finally:
        os.close(fd)


@case
def chown_lchown_symlink(t):
    t.need_drop()
    f = t.mkfile("target")
    link = t.p("link")
    os.symlink("target", link)
    t.ok(os.lchown, link, 111, 222, what="lchown")
    lst, st = os.lstat(link), os.stat(f)
    t.eq((lst.st_uid, lst.st_gid), (111, 222), "link owner after lchown")
    t.eq((st.st_uid, st.st_gid), (0, 0), "target owner unchanged by lchown")
    t.ok(os.chown, link, 333, 444, what="chown through a symlink")
    lst, st = os.lstat(link), os.stat(f)
    t.eq((st.st_uid, st.st_gid), (333, 444), "target owner after chown through the link")
    t.eq((lst.st_uid, lst.st_gid), (111, 222), "link owner unchanged by chown")


@case
def chown_root_clears_suid(t):
    t.need_drop()
    f = t.mkfile("f")
    os.chmod(f, 0o6755)
    t.ok(os.chown, f, NOBODY, NOBODY, what="chown of a 6755 file")
    t.mode(f, 0o0755, "S_ISUID/S_ISGID cleared by chown (Linux)")
    d = t.mkdir("d")
    os.chmod(d, 0o2755)
    t.ok(os.chown, d, NOBODY, NOBODY, what="chown of a 2755 dir")
    t.mode(d, 0o2755, "a directory keeps S_ISGID on chown")


@case
def chown_nonroot_clears_suid(t):
    t.need_drop()
    f = t.mkfile("f")
    os.chown(f, NOBODY, 0)
    os.chmod(f, 0o4755)
    t.user_ok(lambda: os.chown(f, -1, NOBODY), "owner chown to its own group")
    st = os.stat(f)
    t.eq(st.st_gid, NOBODY, "group after owner chown")
    t.mode(f, 0o0755, "S_ISUID cleared by an unprivileged chown (POSIX)")


@case
def write_by_another_user_clears_suid_sgid(t):
    # Write-only descriptors take the mount's direct path (no page cache), where the kernel
    # leaves the clearing of the bits to the file system: both paths must clear them.
    t.need_drop()
    for flags, how in ((os.O_WRONLY, "O_WRONLY"), (os.O_RDWR, "O_RDWR")):
        for bits in (0o4777, 0o2777, 0o6777):
            f = t.mkfile("f-%s-%o" % (how, bits))
            os.chmod(f, bits)

            def write(f=f, flags=flags):
                fd = os.open(f, flags)
                try:
                    os.write(fd, b"x")
                    return stat.S_IMODE(os.fstat(fd).st_mode)
                finally:
                    os.close(fd)

            got = t.user_ok(write, "write through %s to a %04o file" % (how, bits))
            if got is not None:
                t.eq_mode(got, 0o777, "fstat after another user's write through %s to a %04o "
                          "file" % (how, bits))
            t.mode(f, 0o777, "S_ISUID/S_ISGID cleared by another user's write through %s to a "
                   "%04o file" % (how, bits))


@case
def chown_nonroot_eperm(t):
    f = t.mkfile("f")
    os.chown(f, NOBODY, NOBODY)
    g = t.mkfile("g")
    t.user_err(E.EPERM, lambda: os.chown(f, 0, -1), "owner gives the file to root")
    t.user_err(E.EPERM, lambda: os.chown(f, -1, 0), "owner chgrp to a group it is not in")
    t.user_err(E.EPERM, lambda: os.chown(g, NOBODY, -1), "non-owner takes a root file")
    t.user_err(E.EPERM, lambda: os.chown(g, -1, NOBODY), "non-owner chgrp a root file")
    st = os.stat(f)
    t.eq((st.st_uid, st.st_gid), (NOBODY, NOBODY), "owner unchanged after refusals")
    st = os.stat(g)
    t.eq((st.st_uid, st.st_gid), (0, 0), "root file unchanged after refusals")
    t.user_ok(lambda: os.chown(f, NOBODY, NOBODY), "owner chown to itself (no change)")
    t.user_ok(lambda: os.chown(f, -1, -1), "owner chown -1:-1")
    t.user_ok(lambda: os.chown(f, -1, 4242), "chgrp to a supplementary group",
              groups=(4242,))
    t.eq(os.stat(f).st_gid, 4242, "group after chgrp to a supplementary group")


@case
def chown_errors(t):
    t.need_drop()
    t.mkfile("f")
    t.err(E.ENOENT, os.chown, t.p("missing"), 1, 1, what="chown missing")
    t.err(E.ENOTDIR, os.chown, t.p("f", "x"), 1, 1, what="chown below a file")
    os.symlink("missing", t.p("dangling"))
    t.err(E.ENOENT, os.chown, t.p("dangling"), 1, 1, what="chown a dangling symlink")
    t.ok(os.lchown, t.p("dangling"), 7, 7, what="lchown a dangling symlink")
    t.eq(os.lstat(t.p("dangling")).st_uid, 7, "dangling link owner after lchown")


@case
def chown_updates_ctime(t):
    t.need_drop()
    f = t.mkfile("f")
    before = os.stat(f)
    t.tick()
    os.chown(f, 12, 34)
    after = os.stat(f)
    t.ctime_later(before.st_ctime_ns, after.st_ctime_ns, "ctime after chown")
    t.eq(after.st_mtime_ns, before.st_mtime_ns, "mtime unchanged by chown")


# ---------------------------------------------------------------------------------------------
# link (hard links)


@case
def link_basic(t):
    a = t.mkfile("a", b"hello")
    b = t.p("b")
    if t.expect_unsupported("link", os.link, a, b, leaves=(b,)):
        t.eq(t.read(a), b"hello", "source intact after a refused link")
        t.eq(os.stat(a).st_nlink, 1, "source nlink after a refused link")
        return
    t.must(os.link, a, b)
    sa, sb = os.stat(a), os.stat(b)
    t.eq(sa.st_ino, sb.st_ino, "same inode")
    t.eq(sa.st_nlink, 2, "nlink of a")
    t.eq(sb.st_nlink, 2, "nlink of b")
    write_at(b, 5, b" world")
    t.eq(t.read(a), b"hello world", "write through b seen through a")
    os.chmod(a, 0o600)
    t.mode(b, 0o600, "chmod through a seen through b")
    os.unlink(a)
    t.eq(t.read(b), b"hello world", "b after unlinking a")
    t.eq(os.stat(b).st_nlink, 1, "nlink after unlinking a")


@case
def link_updates_ctime_and_dir_mtime(t):
    a = t.mkfile("a")
    sub = t.mkdir("sub")
    before, dbefore = os.stat(a), os.stat(sub)
    t.tick()
    if t.expect_unsupported("link", os.link, a, t.p("sub", "b"), leaves=(t.p("sub", "b"),)):
        t.eq(os.stat(sub).st_mtime_ns, dbefore.st_mtime_ns, "dir mtime after a refused link")
        return
    t.must(os.link, a, t.p("sub", "b"))
    t.ctime_later(before.st_ctime_ns, os.stat(a).st_ctime_ns, "ctime of a after link")
    t.later(dbefore.st_mtime_ns, os.stat(sub).st_mtime_ns, "dir mtime after link")


@case
def link_errors(t):
    # The kernel answers these before asking the file system: the same in every profile.
    a = t.mkfile("a")
    t.mkfile("b")
    d = t.mkdir("d")
    t.err(E.EEXIST, os.link, a, t.p("b"), what="link onto an existing file")
    t.err(E.EEXIST, os.link, a, d, what="link onto an existing dir")
    t.err(E.ENOENT, os.link, t.p("missing"), t.p("c"), what="link of a missing file")
    t.err(E.ENOENT, os.link, a, t.p("nodir", "c"), what="link into a missing dir")
    t.err(E.ENOTDIR, os.link, a, t.p("a", "c"), what="link below a file")
    t.err(E.EPERM, os.link, d, t.p("d2"), what="link of a directory")
    t.err(E.ENAMETOOLONG, os.link, a, t.p("n" * 256), what="link with a 256-byte name")
    t.absent(t.p("c"))
    t.absent(t.p("d2"))


@case
def link_nonroot_eacces(t):
    a = t.mkfile("a")
    os.chown(a, NOBODY, NOBODY)  # its own file: fs.protected_hardlinks does not interfere
    t.user_err(E.EACCES, lambda: os.link(a, t.p("b")), "link into a dir without write access")
    t.absent(t.p("b"))


# ---------------------------------------------------------------------------------------------
# mkdir


@case
def mkdir_basic(t):
    d = t.p("d")
    t.must(os.mkdir, d, 0o755)
    st = os.stat(d)
    t.eq(stat.S_ISDIR(st.st_mode), True, "is a directory")
    t.eq_mode(stat.S_IMODE(st.st_mode), 0o755, "mode")
    t.eq((st.st_uid, st.st_gid), (os.geteuid(), os.getegid()), "owner")
    t.eq(os.listdir(d), [], "empty")
    t.nlink_dir(d, 2)
    t.eq(os.stat(os.path.join(d, "..")).st_ino, os.stat(t.d).st_ino, "d/.. is the parent")
    t.eq(os.stat(os.path.join(d, ".")).st_ino, st.st_ino, "d/. is d")


@case
def mkdir_modes(t):
    for i, m in enumerate((0o700, 0o755, 0o777, 0o711, 0o000, 0o1777, 0o2755)):
        d = t.p("d%d" % i)
        t.ok(os.mkdir, d, m, what="mkdir %04o" % m)
        if os.path.isdir(d):
            want = m & 0o1777  # S_ISGID of a new dir comes from the parent, not mkdir's mode
            t.mode(d, want, "mode of mkdir %04o" % m)


@case
def mkdir_umask(t):
    old = os.umask(0o022)
    try:
        os.mkdir(t.p("a"), 0o777)
        os.umask(0o077)
        os.mkdir(t.p("b"), 0o777)
        os.umask(0o027)
        os.mkdir(t.p("c"), 0o755)
    finally:
        os.umask(old)
    t.mode(t.p("a"), 0o755, "mkdir 0777 under umask 022")
    t.mode(t.p("b"), 0o700, "mkdir 0777 under umask 077")
    t.mode(t.p("c"), 0o750, "mkdir 0755 under umask 027")


@case
def mkdir_nested_and_nlink(t):
    d = t.mkdir("d")
    path = d
    for i in range(8):
        path = os.path.join(path, "s%d" % i)
        t.ok(os.mkdir, path, what="mkdir depth %d" % (i + 1))
    t.eq(os.path.isdir(path), True, "the deepest dir exists")
    for i in range(3):
        os.mkdir(os.path.join(d, "x%d" % i))
    t.mkfile("d/file")
    t.nlink_dir(d, 2 + 4, "nlink with 4 subdirs and a file")


@case
def mkdir_errors(t):
    t.mkfile("f")
    t.mkdir("d")
    os.symlink("d", t.p("ld"))
    os.symlink("missing", t.p("dangling"))
    t.err(E.EEXIST, os.mkdir, t.p("f"), what="mkdir over a file")
    t.err(E.EEXIST, os.mkdir, t.p("d"), what="mkdir over a dir")
    t.err(E.EEXIST, os.mkdir, t.p("ld"), what="mkdir over a symlink to a dir")
    t.err(E.EEXIST, os.mkdir, t.p("dangling"), what="mkdir over a dangling symlink")
    t.err(E.ENOENT, os.mkdir, t.p("missing", "x"), what="mkdir in a missing dir")
    t.err(E.ENOTDIR, os.mkdir, t.p("f", "x"), what="mkdir below a file")
    t.err(E.ENAMETOOLONG, os.mkdir, t.p("n" * 256), what="mkdir with a 256-byte name")
    t.err(E.EEXIST, os.mkdir, t.d, what="mkdir of an existing path")
    t.eq(ftype(t.p("f")), "file", "the file is still a file")
    t.absent(t.p("missing"))


@case
def mkdir_nonroot(t):
    pub = open_dir_for_all(t)
    closed = t.mkdir("closed", 0o755)
    t.user_ok(lambda: os.mkdir(os.path.join(pub, "mine"), 0o750), "mkdir in a 0777 dir")
    st = os.stat(os.path.join(pub, "mine"))
    t.eq((st.st_uid, st.st_gid), (NOBODY, NOBODY), "owner of the new dir")
    t.mode(os.path.join(pub, "mine"), 0o750)
    t.user_err(E.EACCES, lambda: os.mkdir(os.path.join(closed, "x")),
               "mkdir in a 0755 root dir")
    os.chmod(closed, 0o776)  # writable by others, but not searchable
    t.user_err(E.EACCES, lambda: os.mkdir(os.path.join(closed, "x")),
               "mkdir in a dir without search permission")
    t.absent(os.path.join(closed, "x"))


@case
def mkdir_sgid_inherit(t):
    t.need_drop()
    parent = t.mkdir("p", 0o775)
    os.chown(parent, 0, NOBODY)
    os.chmod(parent, 0o2775)
    os.mkdir(os.path.join(parent, "sub"), 0o755)
    st = os.stat(os.path.join(parent, "sub"))
    t.eq(st.st_gid, NOBODY, "gid inherited from an S_ISGID parent")
    t.check(st.st_mode & stat.S_ISGID, "S_ISGID inherited by a subdir", "set", "%04o"
            % stat.S_IMODE(st.st_mode))
    fd = os.open(os.path.join(parent, "file"), os.O_CREAT | os.O_WRONLY, 0o644)
    os.close(fd)
    t.eq(os.stat(os.path.join(parent, "file")).st_gid, NOBODY, "file gid from an S_ISGID parent")


@case
def mkdir_updates_parent_times(t):
    parent = t.mkdir("p")
    before = os.stat(parent)
    t.tick()
    os.mkdir(os.path.join(parent, "c"))
    after = os.stat(parent)
    t.later(before.st_mtime_ns, after.st_mtime_ns, "parent mtime after mkdir")
    t.later(before.st_ctime_ns, after.st_ctime_ns, "parent ctime after mkdir")
    t.nlink_dir(parent, 3)


# ---------------------------------------------------------------------------------------------
# mkfifo


@case
def mkfifo_basic(t):
    p = t.p("fifo")
    if t.expect_unsupported("mkfifo", os.mkfifo, p, 0o644, leaves=(p,)):
        return
    t.must(os.mkfifo, p, 0o640)
    st = os.lstat(p)
    t.eq(stat.S_ISFIFO(st.st_mode), True, "is a FIFO")
    t.eq_mode(stat.S_IMODE(st.st_mode), 0o640, "mode")
    t.eq(st.st_size, 0, "size")
    t.eq(os.listdir(t.d), ["fifo"], "listed")
    # no reader: a non-blocking writer gets ENXIO; a non-blocking reader opens
    t.err(E.ENXIO, os.open, p, os.O_WRONLY | os.O_NONBLOCK, what="open for write, no reader")
    r = t.must(os.open, p, os.O_RDONLY | os.O_NONBLOCK)
    try:
        w = t.must(os.open, p, os.O_WRONLY | os.O_NONBLOCK)
        os.write(w, b"through the pipe")
        os.close(w)
        t.eq(os.read(r, 100), b"through the pipe", "data through the FIFO")
    finally:
        os.close(r)
    t.ok(os.unlink, p, what="unlink the FIFO")
    t.absent(p)


@case
def mkfifo_open_unlinked(t):
    p = t.p("fifo")
    t.must(os.mkfifo, p, 0o640)
    fd = t.must(os.open, p, os.O_RDWR)
    try:
        t.must(os.unlink, p)
        t.absent(p)
        st = t.ok(os.fstat, fd, what="fstat of an unlinked open FIFO")
        if st is not None:
            t.eq(stat.S_ISFIFO(st.st_mode), True, "still a FIFO")
            t.eq(st.st_nlink, 0, "st_nlink of an unlinked FIFO")
        t.ok(os.fchmod, fd, 0o600, what="fchmod of an unlinked open FIFO")
        os.write(fd, b"still a pipe")
        t.eq(os.read(fd, 100), b"still a pipe", "data through an unlinked FIFO")
    finally:
        os.close(fd)
    t.eq(os.listdir(t.d), [], "nothing left")


@case
def mkfifo_errors(t):
    t.mkfile("f")
    t.mkdir("d")
    t.err(E.EEXIST, os.mkfifo, t.p("f"), what="mkfifo over a file")
    t.err(E.EEXIST, os.mkfifo, t.p("d"), what="mkfifo over a dir")
    t.err(E.ENOENT, os.mkfifo, t.p("missing", "x"), what="mkfifo in a missing dir")
    t.err(E.ENOTDIR, os.mkfifo, t.p("f", "x"), what="mkfifo below a file")
    t.err(E.ENAMETOOLONG, os.mkfifo, t.p("n" * 256), what="mkfifo with a 256-byte name")
    t.eq(ftype(t.p("f")), "file", "the file is untouched")


@case
def mkfifo_nonroot(t):
    t.user_err(E.EACCES, lambda: os.mkfifo(t.p("x")), "mkfifo in a 0755 root dir")
    t.absent(t.p("x"))


@case
def mkfifo_umask(t):
    p = t.p("fifo")
    old = os.umask(0o027)
    try:
        if t.expect_unsupported("mkfifo", os.mkfifo, p, 0o666, leaves=(p,)):
            return
        t.must(os.mkfifo, p, 0o666)
    finally:
        os.umask(old)
    t.mode(p, 0o640, "FIFO mode 0666 under umask 027", follow=False)


# ---------------------------------------------------------------------------------------------
# mknod: device nodes, FIFOs and regular files by mknod(2); sockets by bind(2)

DEVICES = ((stat.S_IFCHR, 0o640, (1, 3)), (stat.S_IFBLK, 0o660, (8, 1)),
           (stat.S_IFCHR, 0o600, (0, 0)), (stat.S_IFBLK, 0o644, (4095, 1048575)),
           (stat.S_IFCHR, 0o7777, (136, 300)))


@case
def mknod_devices(t):
    t.need_root("device nodes need CAP_MKNOD")
    for i, (kind, perm, (major, minor)) in enumerate(DEVICES):
        p = t.p("dev%d" % i)
        dev = os.makedev(major, minor)
        if not t.did(os.mknod, p, kind | perm, dev, what="mknod %d:%d" % (major, minor)):
            continue
        st = os.lstat(p)
        t.eq(stat.S_IFMT(st.st_mode), kind, "type of %d:%d" % (major, minor))
        t.eq_mode(stat.S_IMODE(st.st_mode), perm, "mode of %d:%d" % (major, minor))
        t.eq((os.major(st.st_rdev), os.minor(st.st_rdev)), (major, minor), "st_rdev")
        t.eq(st.st_size, 0, "size of a device node")
        t.eq((st.st_uid, st.st_gid), (os.geteuid(), os.getegid()), "owner of a device node")
    t.eq(sorted(os.listdir(t.d)), ["dev%d" % i for i in range(len(DEVICES))], "listed")
    t.eq(sorted(ftype(t.p(n)) for n in os.listdir(t.d)), ["blk", "blk", "chr", "chr", "chr"],
         "types in the listing")


@case
def mknod_fifo_and_regular(t):
    p = t.p("fifo")
    t.must(os.mknod, p, stat.S_IFIFO | 0o604)
    st = os.lstat(p)
    t.eq(stat.S_ISFIFO(st.st_mode), True, "mknod S_IFIFO makes a FIFO")
    t.eq_mode(stat.S_IMODE(st.st_mode), 0o604, "its mode")
    t.eq(st.st_rdev, 0, "a FIFO has no device number")
    r = t.p("reg")
    t.must(os.mknod, r, stat.S_IFREG | 0o640)
    st = os.lstat(r)
    t.eq(stat.S_ISREG(st.st_mode), True, "mknod S_IFREG makes a regular file")
    t.eq_mode(stat.S_IMODE(st.st_mode), 0o640, "its mode")
    t.eq(st.st_size, 0, "empty")
    t.eq(t.read(r), b"", "reads empty")
    t.must(os.mknod, t.p("notype"), 0o600)
    t.eq(ftype(t.p("notype")), "file", "mknod without a type makes a regular file")
    write_at(r, 0, b"written")
    t.eq(t.read(r), b"written", "a regular file by mknod takes writes")


@case
def mknod_errors(t):
    t.need_root("device nodes need CAP_MKNOD")
    t.mkfile("f")
    t.mkdir("d")
    t.must(os.mkfifo, t.p("p"))
    for what, p in (("a file", "f"), ("a dir", "d"), ("a FIFO", "p")):
        t.err(E.EEXIST, os.mknod, t.p(p), stat.S_IFCHR | 0o644, os.makedev(1, 3),
              what="mknod over " + what)
        t.err(E.EEXIST, os.mkfifo, t.p(p), what="mkfifo over " + what)
    t.err(E.ENOENT, os.mknod, t.p("missing", "x"), stat.S_IFIFO | 0o644, what="in a missing dir")
    t.err(E.ENOTDIR, os.mknod, t.p("f", "x"), stat.S_IFIFO | 0o644, what="below a file")
    t.err(E.ENOTDIR, os.mknod, t.p("p", "x"), stat.S_IFIFO | 0o644, what="below a FIFO")
    t.err(E.ENAMETOOLONG, os.mknod, t.p("n" * 256), stat.S_IFCHR | 0o644, 0,
          what="256-byte name")
    t.ok(os.mknod, t.p("n" * 255), stat.S_IFBLK | 0o644, os.makedev(7, 0), what="255-byte name")
    t.ok(os.mkfifo, t.p("f" * 255), what="mkfifo with a 255-byte name")
    t.ok(os.mknod, t.p("d", "s" * 255), stat.S_IFSOCK | 0o644, what="S_IFSOCK, 255-byte name")
    t.eq(ftype(t.p("d", "s" * 255)), "socket", "mknod S_IFSOCK makes a socket")
    # The kernel's checks: a directory by mknod is EPERM, an unknown type EINVAL.
    t.err(E.EPERM, os.mknod, t.p("dd"), stat.S_IFDIR | 0o755, what="mknod S_IFDIR")
    t.err(E.EINVAL, os.mknod, t.p("bad"), 0o030644, what="mknod with an unknown type")
    t.absent(t.p("dd"))
    t.absent(t.p("bad"))
    t.eq(ftype(t.p("f")), "file", "the file is untouched")


@case
def mknod_nonroot(t):
    pub = open_dir_for_all(t)
    # Only CAP_MKNOD makes device nodes; FIFOs and sockets anyone who may write the directory.
    t.user_err(E.EPERM, lambda: os.mknod(os.path.join(pub, "c"), stat.S_IFCHR | 0o644,
                                         os.makedev(1, 3)), "mknod of a character device")
    t.user_err(E.EPERM, lambda: os.mknod(os.path.join(pub, "b"), stat.S_IFBLK | 0o644,
                                         os.makedev(8, 1)), "mknod of a block device")
    t.absent(os.path.join(pub, "c"))
    t.absent(os.path.join(pub, "b"))
    t.user_ok(lambda: os.mknod(os.path.join(pub, "p"), stat.S_IFIFO | 0o640),
              "mknod of a FIFO in a 0777 dir")
    t.user_ok(lambda: os.mkfifo(os.path.join(pub, "q"), 0o600), "mkfifo in a 0777 dir")
    st = os.lstat(os.path.join(pub, "p"))
    t.eq((st.st_uid, st.st_gid), (NOBODY, NOBODY), "owner of a FIFO made by uid 65534")
    t.eq(stat.S_ISFIFO(st.st_mode), True, "type of a FIFO made by uid 65534")
    t.user_err(E.EACCES, lambda: os.mknod(t.p("x"), stat.S_IFIFO | 0o644),
               "mknod of a FIFO in a 0755 root dir")
    t.user_err(E.EACCES, lambda: os.mknod(t.p("y"), stat.S_IFCHR | 0o644, 0),
               "mknod of a device in a 0755 root dir")
    t.absent(t.p("x"))
    # The owner of a FIFO may chmod it; another user may not, nor remove it from a sticky dir.
    t.user_ok(lambda: os.chmod(os.path.join(pub, "p"), 0o604), "chmod of its own FIFO")
    t.mode(os.path.join(pub, "p"), 0o604, "mode after the owner's chmod", follow=False)
    t.must(os.mkfifo, os.path.join(pub, "rootfifo"), 0o666)
    t.user_err(E.EPERM, lambda: os.chmod(os.path.join(pub, "rootfifo"), 0o600),
               "chmod of root's FIFO")
    os.chmod(pub, 0o1777)
    t.user_err(E.EPERM, lambda: os.unlink(os.path.join(pub, "rootfifo")),
               "unlink of root's FIFO in a sticky dir")
    t.user_ok(lambda: os.unlink(os.path.join(pub, "q")), "unlink of its own FIFO in a sticky dir")
    t.exists(os.path.join(pub, "rootfifo"))


@case
def mknod_sgid_inherit(t):
    t.need_root("chown to another group, device nodes")
    d = t.mkdir("g", 0o755)
    os.chown(d, -1, 4242)
    os.chmod(d, 0o2755)
    t.must(os.mkfifo, os.path.join(d, "p"))
    t.must(os.mknod, os.path.join(d, "c"), stat.S_IFCHR | 0o600, os.makedev(1, 5))
    for n in ("p", "c"):
        st = os.lstat(os.path.join(d, n))
        t.eq(st.st_gid, 4242, "group of %s in a set-group-ID dir" % n)


@case
def mknod_metadata_ops(t):
    """chmod, chown, utimensat, rename and unlink of special files, as for any entry."""
    t.need_root("device nodes, chown")
    p, c = t.p("p"), t.p("c")
    t.must(os.mkfifo, p, 0o644)
    t.must(os.mknod, c, stat.S_IFCHR | 0o600, os.makedev(4, 64))
    t.ok(os.chmod, p, 0o4751, what="chmod a FIFO")
    t.mode(p, 0o4751, follow=False)
    t.ok(os.chown, c, 1234, 5678, what="chown a device node")
    st = os.lstat(c)
    t.eq((st.st_uid, st.st_gid), (1234, 5678), "owner after chown")
    t.eq((os.major(st.st_rdev), os.minor(st.st_rdev)), (4, 64), "st_rdev kept by chown")
    t.eq(stat.S_ISCHR(st.st_mode), True, "type kept by chown")
    t.ok(utimensat, c, 1_000_000_000_000_000_000, 1_200_000_000_000_000_000, nofollow=True,
         what="utimensat a device node")
    st = os.lstat(c)
    t.same_time(st.st_atime_ns, 1_000_000_000_000_000_000, "atime set")
    t.same_time(st.st_mtime_ns, 1_200_000_000_000_000_000, "mtime set")
    # truncate is for regular files
    t.err(E.EINVAL, os.truncate, p, 0, what="truncate a FIFO")
    t.mkdir("d")
    t.ok(os.rename, p, t.p("d", "p2"), what="rename a FIFO")
    t.eq(ftype(t.p("d", "p2")), "fifo", "renamed FIFO")
    t.mode(t.p("d", "p2"), 0o4751, "mode kept by rename", follow=False)
    t.mkfile("f", b"data")
    t.ok(os.rename, c, t.p("f"), what="rename a device node over a file")
    st = os.lstat(t.p("f"))
    t.eq(stat.S_ISCHR(st.st_mode), True, "a device where the file was")
    t.eq((os.major(st.st_rdev), os.minor(st.st_rdev)), (4, 64), "st_rdev kept by rename")
    t.mkfile("g", b"file")
    t.ok(os.rename, t.p("g"), t.p("d", "p2"), what="rename a file over a FIFO")
    t.eq(t.read(t.p("d", "p2")), b"file", "the file replaced the FIFO")
    t.err(E.ENOTDIR, os.rename, t.p("d"), t.p("f"), what="rename a dir over a device")
    t.err(E.EISDIR, os.rename, t.p("f"), t.p("d"), what="rename a device over a dir")
    t.ok(os.unlink, t.p("f"), what="unlink a device node")
    t.absent(t.p("f"))
    t.err(E.ENOTDIR, os.rmdir, t.p("d", "p2"), what="rmdir of a file")
    t.eq(sorted(os.listdir(t.d)), ["d"], "what is left")


@case
def mknod_updates_parent_times(t):
    t.need_root("device nodes need CAP_MKNOD")
    parent = t.mkdir("d")
    for name, make in (("p", lambda p: os.mkfifo(p)),
                       ("c", lambda p: os.mknod(p, stat.S_IFCHR | 0o600, os.makedev(1, 7)))):
        before = os.stat(parent)
        t.tick()
        t.must(make, os.path.join(parent, name))
        after = os.stat(parent)
        st = os.lstat(os.path.join(parent, name))
        t.later(before.st_mtime_ns, after.st_mtime_ns, "parent mtime after making %s" % name)
        t.later(before.st_ctime_ns, after.st_ctime_ns, "parent ctime after making %s" % name)
        t.near_now(st.st_mtime_ns, before.st_mtime_ns, time.time_ns(), "mtime of %s" % name)


@case
def socket_bind(t):
    p = t.p("sock")
    old = os.umask(0o022)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        t.must(s.bind, p, what="bind a unix socket")
    finally:
        os.umask(old)
    try:
        st = os.lstat(p)
        t.eq(stat.S_ISSOCK(st.st_mode), True, "bind makes a socket")
        t.eq_mode(stat.S_IMODE(st.st_mode), 0o755, "socket mode 0777 under umask 022")
        t.eq(st.st_size, 0, "size of a socket")
        s.listen(1)
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            t.must(c.connect, p, what="connect to the bound socket")
            conn, _ = s.accept()
            c.sendall(b"over the socket")
            t.eq(conn.recv(100), b"over the socket", "data through the socket")
            conn.close()
        finally:
            c.close()
        s2 = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            t.err(E.EADDRINUSE, s2.bind, p, what="bind to an existing socket path")
        finally:
            s2.close()
    finally:
        s.close()
    t.ok(os.unlink, p, what="unlink the socket")
    t.absent(p)


# ---------------------------------------------------------------------------------------------
# open


@case
def open_creat_mode_and_owner(t):
    for i, m in enumerate((0o644, 0o600, 0o000, 0o755, 0o4755, 0o1600, 0o2750)):
        p = t.p("f%d" % i)
        fd = t.ok(os.open, p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, m, what="create %04o" % m)
        if fd is None:
            continue
        os.close(fd)
        st = os.stat(p)
        t.eq_mode(stat.S_IMODE(st.st_mode), m, "mode of a file created %04o" % m)
        t.eq(st.st_size, 0, "size of a new file")
        t.eq(st.st_nlink, 1, "nlink of a new file")
        t.eq(stat.S_ISREG(st.st_mode), True, "a new file is regular")
    t.eq((os.stat(t.p("f0")).st_uid, os.stat(t.p("f0")).st_gid), (os.geteuid(), os.getegid()),
         "owner of a new file")


@case
def open_creat_umask(t):
    old = os.umask(0o022)
    try:
        os.close(os.open(t.p("a"), os.O_CREAT | os.O_WRONLY, 0o666))
        os.umask(0o077)
        os.close(os.open(t.p("b"), os.O_CREAT | os.O_WRONLY, 0o666))
        os.umask(0o002)
        os.close(os.open(t.p("c"), os.O_CREAT | os.O_WRONLY, 0o777))
    finally:
        os.umask(old)
    t.mode(t.p("a"), 0o644, "0666 under umask 022")
    t.mode(t.p("b"), 0o600, "0666 under umask 077")
    t.mode(t.p("c"), 0o775, "0777 under umask 002")


@case
def open_creat_excl(t):
    t.mkfile("f", b"keep")
    t.mkdir("d")
    os.symlink("f", t.p("lf"))
    os.symlink("missing", t.p("dangling"))
    flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY
    t.err(E.EEXIST, os.open, t.p("f"), flags, 0o644, what="O_EXCL on a file")
    t.err(E.EEXIST, os.open, t.p("d"), flags, 0o644, what="O_EXCL on a dir")
    t.err(E.EEXIST, os.open, t.p("lf"), flags, 0o644, what="O_EXCL on a symlink")
    t.err(E.EEXIST, os.open, t.p("dangling"), flags, 0o644, what="O_EXCL on a dangling symlink")
    t.absent(t.p("missing"), "O_EXCL did not create the dangling link's target")
    t.eq(t.read(t.p("f")), b"keep", "content after refused O_EXCL")
    fd = t.ok(os.open, t.p("new"), flags, 0o644, what="O_EXCL on a new name")
    if fd is not None:
        os.close(fd)
    t.err(E.EEXIST, os.open, t.p("new"), flags, 0o644, what="second O_EXCL on the same name")


@case
def open_creat_existing(t):
    f = t.mkfile("f", b"content", mode=0o600)
    fd = t.must(os.open, f, os.O_CREAT | os.O_RDWR, 0o777)
    try:
        t.eq(os.read(fd, 100), b"content", "O_CREAT without O_EXCL keeps the content")
    finally:
        os.close(fd)
    t.mode(f, 0o600, "O_CREAT on an existing file keeps its mode")


@case
def open_creat_through_dangling_symlink(t):
    os.symlink("target", t.p("link"))
    fd = t.must(os.open, t.p("link"), os.O_CREAT | os.O_WRONLY, 0o600)
    os.write(fd, b"via link")
    os.close(fd)
    t.eq(ftype(t.p("target")), "file", "O_CREAT through a dangling link creates its target")
    t.eq(t.read(t.p("target")), b"via link", "content of the created target")
    t.eq(ftype(t.p("link")), "symlink", "the link stays a link")


@case
def open_trunc(t):
    f = t.mkfile("f", b"x" * 5000)
    before = os.stat(f)
    t.tick()
    fd = t.must(os.open, f, os.O_WRONLY | os.O_TRUNC)
    try:
        t.eq(os.fstat(fd).st_size, 0, "fstat size after O_TRUNC")
    finally:
        os.close(fd)
    after = os.stat(f)
    t.eq(after.st_size, 0, "size after O_TRUNC")
    t.eq(t.read(f), b"", "content after O_TRUNC")
    t.later(before.st_mtime_ns, after.st_mtime_ns, "mtime after O_TRUNC")
    t.later(before.st_ctime_ns, after.st_ctime_ns, "ctime after O_TRUNC")
    g = t.mkfile("g", b"y" * 100)
    fd = t.must(os.open, g, os.O_RDWR | os.O_TRUNC)
    os.write(fd, b"new")
    os.close(fd)
    t.eq(t.read(g), b"new", "O_RDWR|O_TRUNC then write")
    e = t.mkfile("empty")
    fd = t.must(os.open, e, os.O_WRONLY | os.O_TRUNC)
    os.close(fd)
    t.eq(os.stat(e).st_size, 0, "O_TRUNC of an empty file")


@case
def open_append(t):
    f = t.mkfile("f", b"start")
    fd = t.must(os.open, f, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, b"-one")
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, b"-two")
        t.eq(os.lseek(fd, 0, os.SEEK_CUR), 13, "offset after appends")
    finally:
        os.close(fd)
    t.eq(t.read(f), b"start-one-two", "O_APPEND writes at the end despite lseek(0)")
    # two appenders interleave without overwriting each other
    a = os.open(f, os.O_WRONLY | os.O_APPEND)
    b = os.open(f, os.O_WRONLY | os.O_APPEND)
    try:
        for i in range(10):
            os.write(a if i % 2 == 0 else b, b"%d" % i)
    finally:
        os.close(a)
        os.close(b)
    t.eq(t.read(f), b"start-one-two0123456789", "two O_APPEND fds interleave")
    fd = os.open(f, os.O_RDWR | os.O_APPEND)
    try:
        t.eq(os.pread(fd, 5, 0), b"start", "pread on an O_APPEND fd")
        os.write(fd, b"!")
    finally:
        os.close(fd)
    t.eq(t.read(f)[-2:], b"9!", "append after a read")


@case
def open_directory(t):
    d = t.mkdir("d")
    t.mkfile("f")
    fd = t.ok(os.open, d, os.O_RDONLY | os.O_DIRECTORY, what="O_DIRECTORY on a dir")
    if fd is not None:
        t.eq(stat.S_ISDIR(os.fstat(fd).st_mode), True, "fstat of the dir fd")
        os.close(fd)
    t.err(E.ENOTDIR, os.open, t.p("f"), os.O_RDONLY | os.O_DIRECTORY,
          what="O_DIRECTORY on a file")
    os.symlink("f", t.p("lf"))
    os.symlink("d", t.p("ld"))
    t.err(E.ENOTDIR, os.open, t.p("lf"), os.O_RDONLY | os.O_DIRECTORY,
          what="O_DIRECTORY on a link to a file")
    fd = t.ok(os.open, t.p("ld"), os.O_RDONLY | os.O_DIRECTORY, what="O_DIRECTORY via a link")
    if fd is not None:
        os.close(fd)
    t.err(E.ENOENT, os.open, t.p("missing"), os.O_RDONLY | os.O_DIRECTORY,
          what="O_DIRECTORY on a missing path")


@case
def open_enoent(t):
    t.err(E.ENOENT, os.open, t.p("missing"), os.O_RDONLY, what="open missing")
    t.err(E.ENOENT, os.open, t.p("missing"), os.O_RDWR, what="open missing O_RDWR")
    t.err(E.ENOENT, os.open, t.p("nodir", "f"), os.O_CREAT | os.O_WRONLY, 0o644,
          what="O_CREAT in a missing dir")
    t.err(E.ENOENT, os.open, t.p("missing"), os.O_WRONLY | os.O_TRUNC, what="O_TRUNC missing")
    t.err(E.ENOENT, os.open, "", os.O_RDONLY, what="open of an empty path")
    os.symlink("missing", t.p("dangling"))
    t.err(E.ENOENT, os.open, t.p("dangling"), os.O_RDONLY, what="open a dangling link")
    t.absent(t.p("missing"))


@case
def open_eisdir(t):
    d = t.mkdir("d")
    t.err(E.EISDIR, os.open, d, os.O_WRONLY, what="O_WRONLY on a dir")
    t.err(E.EISDIR, os.open, d, os.O_RDWR, what="O_RDWR on a dir")
    t.err(E.EISDIR, os.open, d, os.O_CREAT | os.O_WRONLY, 0o644, what="O_CREAT on a dir")
    t.err(E.EISDIR, os.open, d, os.O_RDONLY | os.O_TRUNC, what="O_TRUNC on a dir")
    t.err(E.EISDIR, os.open, t.p("newname") + "/", os.O_CREAT | os.O_WRONLY, 0o644,
          what="O_CREAT of a name with a trailing slash")
    fd = t.ok(os.open, d, os.O_RDONLY, what="O_RDONLY on a dir")
    if fd is not None:
        t.err(E.EISDIR, os.read, fd, 10, what="read() of a dir fd")
        os.close(fd)
    t.absent(t.p("newname"))


@case
def open_enotdir(t):
    t.mkfile("f", b"x")
    t.err(E.ENOTDIR, os.open, t.p("f", "x"), os.O_RDONLY, what="open below a file")
    t.err(E.ENOTDIR, os.open, t.p("f", "x"), os.O_CREAT | os.O_WRONLY, 0o644,
          what="O_CREAT below a file")
    t.err(E.ENOTDIR, os.open, t.p("f") + "/", os.O_RDONLY, what="open of a file with a trailing /")
    t.err(E.ENOTDIR, os.stat, t.p("f") + "/", what="stat of a file with a trailing /")
    t.err(E.ENOTDIR, os.stat, t.p("f", "."), what="stat of file/.")


@case
def open_rw_modes(t):
    f = t.mkfile("f", b"0123456789")
    fd = os.open(f, os.O_RDONLY)
    try:
        t.err(E.EBADF, os.write, fd, b"x", what="write to an O_RDONLY fd")
        t.eq(os.read(fd, 4), b"0123", "read an O_RDONLY fd")
    finally:
        os.close(fd)
    fd = os.open(f, os.O_WRONLY)
    try:
        t.err(E.EBADF, os.read, fd, 1, what="read from an O_WRONLY fd")
        t.eq(os.write(fd, b"ab"), 2, "write an O_WRONLY fd")
    finally:
        os.close(fd)
    fd = os.open(f, os.O_RDWR)
    try:
        os.lseek(fd, 5, os.SEEK_SET)
        os.write(fd, b"XY")
        os.lseek(fd, 0, os.SEEK_SET)
        t.eq(os.read(fd, 100), b"ab234XY789", "O_RDWR write then read")
        t.eq(os.lseek(fd, 0, os.SEEK_END), 10, "SEEK_END")
    finally:
        os.close(fd)


@case
def open_nofollow_and_eloop(t):
    t.mkfile("f", b"x")
    os.symlink("f", t.p("lf"))
    os.symlink("loop2", t.p("loop1"))
    os.symlink("loop1", t.p("loop2"))
    os.symlink("self", t.p("self"))
    t.err(E.ELOOP, os.open, t.p("lf"), os.O_RDONLY | os.O_NOFOLLOW, what="O_NOFOLLOW on a link")
    fd = t.ok(os.open, t.p("f"), os.O_RDONLY | os.O_NOFOLLOW, what="O_NOFOLLOW on a file")
    if fd is not None:
        os.close(fd)
    t.err(E.ELOOP, os.open, t.p("loop1"), os.O_RDONLY, what="open a two-link loop")
    t.err(E.ELOOP, os.open, t.p("self"), os.O_RDONLY, what="open a self loop")
    t.err(E.ELOOP, os.open, t.p("loop1"), os.O_CREAT | os.O_WRONLY, 0o644,
          what="O_CREAT through a loop")
    t.err(E.ELOOP, os.open, t.p("self", "x"), os.O_RDONLY, what="open below a loop")


@case
def open_eacces_nonroot(t):
    secret = t.mkfile("secret", b"s", mode=0o600)
    public = t.mkfile("public", b"p", mode=0o644)
    nothing = t.mkfile("nothing", b"n", mode=0o000)
    t.user_err(E.EACCES, lambda: open_close(secret, os.O_RDONLY), "read a 0600 root file")
    t.user_err(E.EACCES, lambda: open_close(secret, os.O_WRONLY), "write a 0600 root file")
    t.user_ok(lambda: open_close(public, os.O_RDONLY), "read a 0644 root file")
    t.user_err(E.EACCES, lambda: open_close(public, os.O_WRONLY), "write a 0644 root file")
    t.user_err(E.EACCES, lambda: open_close(public, os.O_RDWR), "O_RDWR a 0644 root file")
    t.user_err(E.EACCES, lambda: open_close(public, os.O_WRONLY | os.O_TRUNC),
               "O_TRUNC a 0644 root file")
    t.user_err(E.EACCES, lambda: open_close(nothing, os.O_RDONLY), "read a 0000 root file")
    t.user_err(E.EACCES, lambda: open_close(t.p("new"), os.O_CREAT | os.O_WRONLY),
               "create in a 0755 root dir")
    t.absent(t.p("new"))
    t.eq(t.read(public), b"p", "content after refused O_TRUNC")
    hidden = t.mkdir("hidden", 0o700)
    t.mkfile("hidden/f", b"h", mode=0o644)
    t.user_err(E.EACCES, lambda: open_close(os.path.join(hidden, "f"), os.O_RDONLY),
               "open below a 0700 root dir")
    t.user_err(E.EACCES, lambda: os.listdir(hidden), "list a 0700 root dir")
    os.chmod(hidden, 0o711)
    t.user_ok(lambda: open_close(os.path.join(hidden, "f"), os.O_RDONLY),
              "open below a 0711 dir (search only)")
    t.user_err(E.EACCES, lambda: os.listdir(hidden), "list a 0711 dir")
    os.chmod(hidden, 0o744)
    t.user_err(E.EACCES, lambda: open_close(os.path.join(hidden, "f"), os.O_RDONLY),
               "open below a 0744 dir (read, no search)")


@case
def open_owner_bits_nonroot(t):
    ro = t.mkfile("ro", b"r", mode=0o400)
    wo = t.mkfile("wo", b"w", mode=0o200)
    both = t.mkfile("both", b"b", mode=0o077)
    for f in (ro, wo, both):
        os.chown(f, NOBODY, NOBODY)
    t.user_ok(lambda: open_close(ro, os.O_RDONLY), "owner reads a 0400 file")
    t.user_err(E.EACCES, lambda: open_close(ro, os.O_WRONLY), "owner writes a 0400 file")
    t.user_ok(lambda: open_close(wo, os.O_WRONLY), "owner writes a 0200 file")
    t.user_err(E.EACCES, lambda: open_close(wo, os.O_RDONLY), "owner reads a 0200 file")
    # the owner class decides, even when group/other would allow
    t.user_err(E.EACCES, lambda: open_close(both, os.O_RDONLY), "owner of a 0077 file")


@case
def open_group_bits_nonroot(t):
    t.need_drop()
    g = t.mkfile("g", b"g", mode=0o040)
    os.chown(g, 0, NOBODY)
    t.user_ok(lambda: open_close(g, os.O_RDONLY), "group member reads a 0040 file")
    t.user_err(E.EACCES, lambda: open_close(g, os.O_WRONLY), "group member writes a 0040 file")
    t.user_err(E.EACCES, lambda: open_close(g, os.O_RDONLY), "non-member reads a 0040 file",
               gid=4242)
    t.user_ok(lambda: open_close(g, os.O_RDONLY), "supplementary member reads a 0040 file",
              gid=4242, groups=(NOBODY,))
    o = t.mkfile("o", b"o", mode=0o604)
    os.chown(o, 0, NOBODY)
    t.user_err(E.EACCES, lambda: open_close(o, os.O_RDONLY),
               "group class without read on a 0604 file, even though other may")


@case
def open_creat_readonly_mode_nonroot(t):
    pub = open_dir_for_all(t)
    p = os.path.join(pub, "f")

    def create_rdwr():
        fd = os.open(p, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o444)
        try:
            os.write(fd, b"written through the creating fd")
            return os.fstat(fd).st_uid
        finally:
            os.close(fd)

    t.eq(t.user_ok(create_rdwr, "O_CREAT|O_RDWR with mode 0444"), NOBODY, "owner of the new file")
    t.mode(p, 0o444)
    t.eq(t.read(p), b"written through the creating fd", "content written through that fd")
    t.user_err(E.EACCES, lambda: open_close(p, os.O_WRONLY), "reopen the 0444 file for write")


@case
def open_enametoolong(t):
    t.err(E.ENAMETOOLONG, os.open, t.p("x" * 256), os.O_CREAT | os.O_WRONLY, 0o644,
          what="O_CREAT with a 256-byte name")
    t.err(E.ENAMETOOLONG, os.open, t.p("x" * 256), os.O_RDONLY, what="open a 256-byte name")
    t.err(E.ENAMETOOLONG, os.open, t.p("x" * 1000), os.O_RDONLY, what="open a 1000-byte name")
    fd = t.ok(os.open, t.p("x" * 255), os.O_CREAT | os.O_WRONLY, 0o644,
              what="O_CREAT with a 255-byte name")
    if fd is not None:
        os.close(fd)
    t.eq(os.listdir(t.d), ["x" * 255], "only the 255-byte name exists")


# ---------------------------------------------------------------------------------------------
# read / write


@case
def rw_pwrite_past_eof_hole(t):
    f = t.mkfile("f", b"head")
    fd = os.open(f, os.O_RDWR)
    try:
        os.pwrite(fd, b"tail", 100000)
        t.eq(os.fstat(fd).st_size, 100004, "size after a write past EOF")
        t.eq(os.pread(fd, 100, 4), b"\0" * 100, "the hole reads as zeros")
        t.eq(os.pread(fd, 8, 99998), b"\0\0tail", "the tail")
        t.eq(os.pread(fd, 10, 100004), b"", "read at EOF")
        t.eq(os.pread(fd, 10, 500000), b"", "read past EOF")
    finally:
        os.close(fd)
    data = t.read(f)
    t.eq(len(data), 100004, "whole-file length")
    t.eq(data[:4] + data[100000:], b"headtail", "both ends")
    t.eq(data[4:100000].count(0), 99996, "all hole bytes zero")


@case
def rw_overlapping_writes(t):
    f = t.mkfile("f")
    model = bytearray()
    fd = os.open(f, os.O_RDWR)
    try:
        for off, n, ch in ((0, 1000, b"a"), (500, 1000, b"b"), (250, 10, b"c"), (1490, 20, b"d"),
                           (4096, 4096, b"e"), (4000, 200, b"f"), (0, 1, b"g")):
            data = ch * n
            os.pwrite(fd, data, off)
            if len(model) < off + n:
                model.extend(b"\0" * (off + n - len(model)))
            model[off:off + n] = data
        t.eq(os.fstat(fd).st_size, len(model), "size after overlapping writes")
    finally:
        os.close(fd)
    t.eq(t.read(f), bytes(model), "content after overlapping writes")


@case
def rw_large_file(t):
    f = t.p("big")
    block = bytes(range(256)) * 4096  # 1 MiB
    with open(f, "wb") as w:
        for i in range(5):
            w.write(block[i:] + block[:i])
    t.eq(os.stat(f).st_size, 5 << 20, "size of a 5 MiB file")
    with open(f, "rb") as r:
        for i in range(5):
            t.eq(r.read(1 << 20) == block[i:] + block[:i], True, "MiB %d content" % i)
    fd = os.open(f, os.O_RDONLY)
    try:
        want = (block[2:] + block[:2])[-4:] + (block[3:] + block[:3])[:4]
        t.eq(os.pread(fd, 8, (3 << 20) - 4), want, "read across a MiB boundary")
    finally:
        os.close(fd)


@case
def rw_fsync(t):
    f = t.mkfile("f", b"abc")
    fd = os.open(f, os.O_RDWR)
    try:
        os.write(fd, b"xyz")
        t.ok(os.fsync, fd, what="fsync")
        t.ok(os.fdatasync, fd, what="fdatasync")
    finally:
        os.close(fd)
    dfd = os.open(t.d, os.O_RDONLY | os.O_DIRECTORY)
    try:
        t.ok(os.fsync, dfd, what="fsync of a directory fd")
    finally:
        os.close(dfd)
    t.eq(t.read(f), b"xyz", "content after fsync")


@case
def rw_two_fds_coherent(t):
    f = t.mkfile("f", b"0" * 100)
    a = os.open(f, os.O_RDWR)
    b = os.open(f, os.O_RDWR)
    try:
        os.pwrite(a, b"AAAA", 10)
        t.eq(os.pread(b, 4, 10), b"AAAA", "write through one fd read through another")
        os.ftruncate(b, 50)
        t.eq(os.fstat(a).st_size, 50, "truncate through one fd seen by fstat of another")
        os.pwrite(b, b"B", 200)
        t.eq(os.pread(a, 10, 195), b"\0" * 5 + b"B", "extension seen through another fd")
    finally:
        os.close(a)
        os.close(b)


# ---------------------------------------------------------------------------------------------
# rename


@case
def rename_file(t):
    a = t.mkfile("a", b"payload", mode=0o640)
    ino = os.stat(a).st_ino
    t.must(os.rename, a, t.p("b"))
    t.absent(a)
    t.eq(t.read(t.p("b")), b"payload", "content after rename")
    t.mode(t.p("b"), 0o640, "mode after rename")
    t.eq(os.stat(t.p("b")).st_ino, ino, "inode number kept by rename")
    t.mkdir("d")
    t.must(os.rename, t.p("b"), t.p("d", "c"))
    t.eq(t.read(t.p("d", "c")), b"payload", "content after a move to another dir")
    t.eq(os.listdir(t.d), ["d"], "source dir listing after the move")
    t.eq(os.listdir(t.p("d")), ["c"], "target dir listing after the move")


@case
def rename_over_existing_file(t):
    a = t.mkfile("a", b"new")
    b = t.mkfile("b", b"old content")
    fd = os.open(b, os.O_RDONLY)
    try:
        t.must(os.rename, a, b)
        t.absent(a)
        t.eq(t.read(b), b"new", "target has the source's content")
        t.eq(os.pread(fd, 100, 0), b"old content", "an fd open on the replaced file reads it")
    finally:
        os.close(fd)
    t.eq(os.listdir(t.d), ["b"], "listing after rename over a file")


@case
def rename_same_path(t):
    a = t.mkfile("a", b"x")
    t.ok(os.rename, a, a, what="rename a file onto itself")
    t.eq(t.read(a), b"x", "content after rename onto itself")
    d = t.mkdir("d")
    t.ok(os.rename, d, d, what="rename a dir onto itself")
    t.eq(os.path.isdir(d), True, "dir after rename onto itself")


@case
def rename_dir_with_contents(t):
    t.mkdir("d")
    t.mkdir("d/sub")
    t.mkfile("d/f", b"f")
    t.mkfile("d/sub/g", b"g")
    os.symlink("f", t.p("d", "l"))
    t.mkdir("other")
    t.must(os.rename, t.p("d"), t.p("other", "moved"))
    t.absent(t.p("d"))
    m = t.p("other", "moved")
    t.eq(sorted(os.listdir(m)), ["f", "l", "sub"], "listing of the moved dir")
    t.eq(t.read(os.path.join(m, "f")), b"f", "file in the moved dir")
    t.eq(t.read(os.path.join(m, "sub", "g")), b"g", "file two levels down")
    t.eq(os.readlink(os.path.join(m, "l")), "f", "symlink in the moved dir")
    t.eq(t.read(os.path.join(m, "l")), b"f", "relative link still resolves")
    t.eq(os.stat(os.path.join(m, "..")).st_ino, os.stat(t.p("other")).st_ino,
         "moved/.. is the new parent")
    t.nlink_dir(t.d, 3, "old parent nlink after the move (other, and itself)")
    t.nlink_dir(t.p("other"), 3, "new parent nlink after the move")


@case
def rename_dir_over_empty_dir(t):
    t.mkdir("a")
    t.mkfile("a/f", b"in a")
    t.mkdir("b")
    t.must(os.rename, t.p("a"), t.p("b"))
    t.absent(t.p("a"))
    t.eq(os.listdir(t.p("b")), ["f"], "target holds the source's entries")
    t.eq(t.read(t.p("b", "f")), b"in a", "content below the renamed dir")


@case
def rename_dir_over_nonempty_dir(t):
    t.mkdir("a")
    t.mkfile("a/x", b"a")
    t.mkdir("b")
    t.mkfile("b/y", b"b")
    t.err((E.ENOTEMPTY, E.EEXIST), os.rename, t.p("a"), t.p("b"),
          what="dir over a non-empty dir")
    t.mkdir("c")
    t.mkdir("c/sub")
    t.err((E.ENOTEMPTY, E.EEXIST), os.rename, t.p("a"), t.p("c"),
          what="dir over a dir holding only a dir")
    t.eq(os.listdir(t.p("a")), ["x"], "source intact")
    t.eq(os.listdir(t.p("b")), ["y"], "target intact")


@case
def rename_file_over_dir(t):
    t.mkfile("f", b"f")
    t.mkdir("d")
    t.mkdir("full")
    t.mkfile("full/x")
    t.err(E.EISDIR, os.rename, t.p("f"), t.p("d"), what="file over an empty dir")
    t.err(E.EISDIR, os.rename, t.p("f"), t.p("full"), what="file over a non-empty dir")
    t.eq(ftype(t.p("f")), "file", "source intact")
    t.eq(ftype(t.p("d")), "dir", "target intact")


@case
def rename_dir_over_file(t):
    t.mkdir("d")
    t.mkfile("f", b"f")
    t.err(E.ENOTDIR, os.rename, t.p("d"), t.p("f"), what="dir over a file")
    os.symlink("d", t.p("ld"))
    t.err(E.ENOTDIR, os.rename, t.p("d"), t.p("ld"), what="dir over a symlink to a dir")
    t.eq(ftype(t.p("d")), "dir", "source intact")
    t.eq(t.read(t.p("f")), b"f", "target intact")


@case
def rename_into_own_subdir(t):
    t.mkdir("a")
    t.mkdir("a/b")
    t.mkdir("a/b/c")
    t.err(E.EINVAL, os.rename, t.p("a"), t.p("a", "x"), what="dir into itself")
    t.err(E.EINVAL, os.rename, t.p("a"), t.p("a", "b", "x"), what="dir into its child")
    t.err(E.EINVAL, os.rename, t.p("a"), t.p("a", "b", "c", "x"), what="dir into its grandchild")
    t.err((E.EINVAL, E.ENOTEMPTY, E.EEXIST), os.rename, t.p("a"), t.p("a", "b"),
          what="dir onto its own child")
    t.err((E.EINVAL, E.EBUSY), os.rename, t.p("a", "."), t.p("z"), what="rename of a/.")
    t.err((E.EINVAL, E.EBUSY), os.rename, t.p("a", "b", ".."), t.p("z"), what="rename of a/b/..")
    t.eq(os.path.isdir(t.p("a", "b", "c")), True, "tree intact")
    t.absent(t.p("z"))


@case
def rename_errors(t):
    t.mkfile("f")
    t.mkdir("d")
    t.err(E.ENOENT, os.rename, t.p("missing"), t.p("x"), what="rename of a missing source")
    t.err(E.ENOENT, os.rename, t.p("f"), t.p("nodir", "x"), what="rename into a missing dir")
    t.err(E.ENOTDIR, os.rename, t.p("f"), t.p("f", "x"), what="rename below a file")
    t.err(E.ENOTDIR, os.rename, t.p("f") + "/", t.p("x"), what="rename of file/ (trailing /)")
    t.err(E.ENOTDIR, os.rename, t.p("f"), t.p("x") + "/", what="rename of a file to x/")
    t.err(E.ENAMETOOLONG, os.rename, t.p("f"), t.p("n" * 256), what="rename to a 256-byte name")
    t.eq(sorted(os.listdir(t.d)), ["d", "f"], "nothing changed")
    t.ok(os.rename, t.p("d") + "/", t.p("e") + "/", what="rename dir/ to e/")
    t.eq(sorted(os.listdir(t.d)), ["e", "f"], "dir renamed with trailing slashes")


@case
def rename_symlink(t):
    t.mkfile("target", b"t")
    os.symlink("target", t.p("l"))
    t.must(os.rename, t.p("l"), t.p("l2"))
    t.eq(os.readlink(t.p("l2")), "target", "the link moved, target string kept")
    t.eq(t.read(t.p("target")), b"t", "target untouched")
    t.absent(t.p("l"))
    t.mkfile("over", b"o")
    t.must(os.rename, t.p("l2"), t.p("over"))
    t.eq(ftype(t.p("over")), "symlink", "a link replaced a file")
    t.must(os.rename, t.p("target"), t.p("over"))
    t.eq(ftype(t.p("over")), "file", "a file replaced a link")
    t.eq(t.read(t.p("over")), b"t", "content of the file that replaced the link")


@case
def rename_noreplace(t):
    t.mkfile("a", b"a")
    t.mkfile("b", b"b")
    try:
        renameat2(t.p("a"), t.p("c"), RENAME_NOREPLACE)
    except OSError as e:
        if e.errno in (E.ENOSYS,):
            raise Skip("renameat2 is not available here") from e
        if e.errno == E.EINVAL:
            t.fail("renameat2(RENAME_NOREPLACE) to a new name", "success", "EINVAL")
            return
        t.fail("renameat2(RENAME_NOREPLACE) to a new name", "success", ename(e.errno))
        return
    t.asserts += 1
    t.absent(t.p("a"))
    t.eq(t.read(t.p("c")), b"a", "content after RENAME_NOREPLACE")
    t.err(E.EEXIST, renameat2, t.p("c"), t.p("b"), RENAME_NOREPLACE,
          what="RENAME_NOREPLACE onto a file")
    t.mkdir("d")
    t.mkdir("e")
    t.err(E.EEXIST, renameat2, t.p("d"), t.p("e"), RENAME_NOREPLACE,
          what="RENAME_NOREPLACE of a dir onto an empty dir")
    t.err(E.EEXIST, renameat2, t.p("c"), t.p("d"), RENAME_NOREPLACE,
          what="RENAME_NOREPLACE of a file onto a dir")
    t.eq(t.read(t.p("b")), b"b", "target intact after refusal")
    t.eq(t.read(t.p("c")), b"a", "source intact after refusal")
    t.ok(renameat2, t.p("d"), t.p("f"), RENAME_NOREPLACE, what="RENAME_NOREPLACE of a dir")
    t.eq(sorted(os.listdir(t.d)), ["b", "c", "e", "f"], "listing after RENAME_NOREPLACE")


@case
def rename_updates_times(t):
    t.mkdir("src")
    t.mkdir("dst")
    f = t.mkfile("src/f", b"x")
    s0, d0, f0 = os.stat(t.p("src")), os.stat(t.p("dst")), os.stat(f)
    t.tick()
    os.rename(f, t.p("dst", "f"))
    s1, d1, f1 = os.stat(t.p("src")), os.stat(t.p("dst")), os.stat(t.p("dst", "f"))
    t.later(s0.st_mtime_ns, s1.st_mtime_ns, "source dir mtime after rename")
    t.later(d0.st_mtime_ns, d1.st_mtime_ns, "target dir mtime after rename")
    t.later(s0.st_ctime_ns, s1.st_ctime_ns, "source dir ctime after rename")
    t.eq(f1.st_mtime_ns, f0.st_mtime_ns, "the file's mtime is kept by rename")
    t.ctime_later(f0.st_ctime_ns, f1.st_ctime_ns, "the file's ctime after rename (Linux)")


@case
def rename_nonroot(t):
    t.mkfile("f")
    t.user_err(E.EACCES, lambda: os.rename(t.p("f"), t.p("g")), "rename in a 0755 root dir")
    pub = open_dir_for_all(t)
    t.mkfile("pub/mine")
    os.chown(t.p("pub", "mine"), NOBODY, NOBODY)
    t.user_ok(lambda: os.rename(t.p("pub", "mine"), t.p("pub", "moved")),
              "rename in a 0777 dir")
    t.user_err(E.EACCES, lambda: os.rename(t.p("pub", "moved"), t.p("g")),
               "move out to a 0755 root dir")
    t.eq(sorted(os.listdir(pub)), ["moved"], "listing after the refusal")
    t.user_ok(lambda: os.mkdir(os.path.join(pub, "sub")), "mkdir in a 0777 dir")
    t.user_ok(lambda: os.mkdir(os.path.join(pub, "other"), 0o777), "mkdir another")
    os.chmod(t.p("pub", "sub"), 0o555)
    t.user_ok(lambda: os.rename(t.p("pub", "sub"), t.p("pub", "sub2")),
              "rename of a 0555 dir within its parent")
    t.user_err(E.EACCES, lambda: os.rename(t.p("pub", "sub2"), t.p("pub", "other", "sub")),
               "move of a 0555 dir to another parent (its .. must change)")


@case
def rename_sticky_dir(t):
    sticky = t.mkdir("sticky", 0o777)
    os.chmod(sticky, 0o1777)
    t.mkfile("sticky/roots", b"r")
    t.mkfile("sticky/mine", b"m")
    os.chown(t.p("sticky", "mine"), NOBODY, NOBODY)
    t.user_err((E.EPERM, E.EACCES), lambda: os.rename(t.p("sticky", "roots"),
                                                      t.p("sticky", "x")),
               "rename another user's file in a sticky dir")
    t.user_err((E.EPERM, E.EACCES), lambda: os.rename(t.p("sticky", "mine"),
                                                      t.p("sticky", "roots")),
               "replace another user's file in a sticky dir")
    t.user_ok(lambda: os.rename(t.p("sticky", "mine"), t.p("sticky", "mine2")),
              "rename one's own file in a sticky dir")
    t.eq(sorted(os.listdir(sticky)), ["mine2", "roots"], "sticky dir listing")


@case
def rename_many_in_dir(t):
    for i in range(50):
        t.mkfile("f%02d" % i, b"%d" % i)
    for i in range(50):
        os.rename(t.p("f%02d" % i), t.p("g%02d" % i))
    t.eq(sorted(os.listdir(t.d)), ["g%02d" % i for i in range(50)], "listing after 50 renames")
    t.eq(all(t.read(t.p("g%02d" % i)) == b"%d" % i for i in range(50)), True,
         "contents after 50 renames")


# ---------------------------------------------------------------------------------------------
# rmdir


@case
def rmdir_basic(t):
    d = t.mkdir("d")
    before = os.stat(t.d)
    t.tick()
    t.must(os.rmdir, d)
    t.absent(d)
    after = os.stat(t.d)
    t.later(before.st_mtime_ns, after.st_mtime_ns, "parent mtime after rmdir")
    t.later(before.st_ctime_ns, after.st_ctime_ns, "parent ctime after rmdir")
    t.nlink_dir(t.d, 2, "parent nlink after rmdir")
    t.eq(os.listdir(t.d), [], "parent empty")


@case
def rmdir_errors(t):
    t.mkdir("full")
    t.mkfile("full/f")
    t.mkdir("deep")
    t.mkdir("deep/sub")
    t.mkdir("withlink")
    os.symlink("nowhere", t.p("withlink", "l"))
    t.mkfile("f")
    t.mkdir("d")
    os.symlink("d", t.p("ld"))
    t.err((E.ENOTEMPTY, E.EEXIST), os.rmdir, t.p("full"), what="rmdir of a dir with a file")
    t.err((E.ENOTEMPTY, E.EEXIST), os.rmdir, t.p("deep"), what="rmdir of a dir with a dir")
    t.err((E.ENOTEMPTY, E.EEXIST), os.rmdir, t.p("withlink"), what="rmdir of a dir with a link")
    t.err(E.ENOTDIR, os.rmdir, t.p("f"), what="rmdir of a file")
    t.err(E.ENOTDIR, os.rmdir, t.p("ld"), what="rmdir of a symlink to a dir")
    t.err(E.ENOTDIR, os.rmdir, t.p("f", "x"), what="rmdir below a file")
    t.err(E.ENOENT, os.rmdir, t.p("missing"), what="rmdir of a missing dir")
    t.err(E.EINVAL, os.rmdir, t.p("d", "."), what="rmdir of d/.")
    t.err((E.ENOTEMPTY, E.EEXIST), os.rmdir, t.p("deep", "sub", ".."), what="rmdir of d/sub/..")
    t.err(E.ENAMETOOLONG, os.rmdir, t.p("n" * 256), what="rmdir of a 256-byte name")
    t.eq(sorted(os.listdir(t.d)), ["d", "deep", "f", "full", "ld", "withlink"], "nothing removed")
    t.eq(os.path.isdir(t.p("d")), True, "d still a dir")


@case
def rmdir_after_emptying(t):
    t.mkdir("d")
    t.mkfile("d/a")
    t.mkdir("d/b")
    os.unlink(t.p("d", "a"))
    t.err((E.ENOTEMPTY, E.EEXIST), os.rmdir, t.p("d"), what="rmdir with one subdir left")
    os.rmdir(t.p("d", "b"))
    t.ok(os.rmdir, t.p("d"), what="rmdir once empty")
    t.absent(t.p("d"))
    t.mkdir("d")
    t.eq(os.listdir(t.p("d")), [], "a dir recreated at the same name is empty")


@case
def rmdir_nonroot(t):
    t.mkdir("d")
    t.user_err(E.EACCES, lambda: os.rmdir(t.p("d")), "rmdir in a 0755 root dir")
    sticky = t.mkdir("sticky", 0o777)
    os.chmod(sticky, 0o1777)
    t.mkdir("sticky/roots")
    t.mkdir("sticky/mine")
    os.chown(t.p("sticky", "mine"), NOBODY, NOBODY)
    t.user_err((E.EPERM, E.EACCES), lambda: os.rmdir(t.p("sticky", "roots")),
               "rmdir of another user's dir in a sticky dir")
    t.user_ok(lambda: os.rmdir(t.p("sticky", "mine")), "rmdir of one's own dir in a sticky dir")
    t.eq(os.listdir(sticky), ["roots"], "sticky dir listing")
    t.exists(t.p("d"))


# ---------------------------------------------------------------------------------------------
# symlink


@case
def symlink_basic(t):
    t.mkfile("target", b"the target")
    link = t.p("link")
    t.must(os.symlink, "target", link)
    lst = os.lstat(link)
    t.eq(stat.S_ISLNK(lst.st_mode), True, "lstat: a symlink")
    t.eq(lst.st_size, len("target"), "lstat size is the target's length")
    t.eq(os.readlink(link), "target", "readlink")
    t.eq(t.read(link), b"the target", "reading through the link")
    st = os.stat(link)
    t.eq(stat.S_ISREG(st.st_mode), True, "stat follows the link")
    t.eq(st.st_ino, os.stat(t.p("target")).st_ino, "stat gives the target's inode")
    t.eq((lst.st_uid, lst.st_gid), (os.geteuid(), os.getegid()), "link owner")
    write_at(link, 0, b"THE")
    t.eq(t.read(t.p("target")), b"THE target", "write through the link")


@case
def symlink_targets(t):
    targets = ["a", "../x", "/etc/passwd", "dir/sub/file", "a b c", "ünïcødé", "x" * 255,
               "./.", "..", "/", "a//b", "trailing/", "-dash", "t" * 4095,
               "/".join(["seg"] * 1000)]
    for i, target in enumerate(targets):
        p = t.p("l%d" % i)
        if t.did(os.symlink, target, p, what="symlink to a %d-byte target" % len(target)):
            t.eq(os.readlink(p), target, "readlink of a %d-byte target %r" % (len(target),
                                                                              target[:20]))
            t.eq(os.lstat(p).st_size, len(target.encode()), "lstat size of link %d" % i)


@case
def symlink_target_limits(t):
    t.err(E.ENAMETOOLONG, os.symlink, "t" * 4096, t.p("l"), what="symlink to a 4096-byte target")
    t.err(E.ENOENT, os.symlink, "", t.p("l"), what="symlink to an empty target")
    t.absent(t.p("l"))


@case
def symlink_dangling(t):
    link = t.p("dangling")
    t.must(os.symlink, "nowhere", link)
    t.err(E.ENOENT, os.stat, link, what="stat of a dangling link")
    t.eq(stat.S_ISLNK(os.lstat(link).st_mode), True, "lstat of a dangling link")
    t.eq(os.readlink(link), "nowhere", "readlink of a dangling link")
    t.err(E.ENOENT, os.open, link, os.O_RDONLY, what="open of a dangling link")
    t.eq(os.listdir(t.d), ["dangling"], "a dangling link is listed")
    t.mkfile("nowhere", b"now here")
    t.eq(t.read(link), b"now here", "the link resolves once its target exists")
    os.unlink(t.p("nowhere"))
    t.err(E.ENOENT, os.stat, link, what="dangling again")


@case
def symlink_eloop(t):
    os.symlink("b", t.p("a"))
    os.symlink("a", t.p("b"))
    os.symlink("c", t.p("c"))
    t.err(E.ELOOP, os.stat, t.p("a"), what="stat of a two-link loop")
    t.err(E.ELOOP, os.stat, t.p("c"), what="stat of a self loop")
    t.err(E.ELOOP, os.stat, t.p("a", "x"), what="stat below a loop")
    t.err(E.ELOOP, os.chmod, t.p("a"), 0o644, what="chmod through a loop")
    t.eq(os.readlink(t.p("a")), "b", "readlink of a looping link")
    # a chain of 50 links is over the kernel's limit of 40
    t.mkfile("end", b"end")
    prev = "end"
    for i in range(50):
        os.symlink(prev, t.p("chain%d" % i))
        prev = "chain%d" % i
    t.eq(t.read(t.p("chain30")), b"end", "a chain of 31 links resolves")
    t.err(E.ELOOP, os.stat, t.p("chain49"), what="a chain of 50 links")


@case
def symlink_errors(t):
    t.mkfile("f")
    t.mkdir("d")
    os.symlink("x", t.p("l"))
    t.err(E.EEXIST, os.symlink, "x", t.p("f"), what="symlink over a file")
    t.err(E.EEXIST, os.symlink, "x", t.p("d"), what="symlink over a dir")
    t.err(E.EEXIST, os.symlink, "y", t.p("l"), what="symlink over a symlink")
    t.err(E.ENOENT, os.symlink, "x", t.p("missing", "l"), what="symlink in a missing dir")
    t.err(E.ENOTDIR, os.symlink, "x", t.p("f", "l"), what="symlink below a file")
    t.err(E.ENAMETOOLONG, os.symlink, "x", t.p("n" * 256), what="symlink with a 256-byte name")
    t.err(E.EINVAL, os.readlink, t.p("f"), what="readlink of a file")
    t.err(E.EINVAL, os.readlink, t.p("d"), what="readlink of a dir")
    t.err(E.ENOENT, os.readlink, t.p("missing"), what="readlink of a missing path")
    t.eq(os.readlink(t.p("l")), "x", "the existing link kept its target")


@case
def symlink_relative_resolution(t):
    t.mkdir("a")
    t.mkdir("a/b")
    t.mkfile("a/file", b"in a")
    t.mkfile("top", b"top")
    os.symlink("../file", t.p("a", "b", "up"))
    os.symlink("../../top", t.p("a", "b", "up2"))
    os.symlink(t.p("top"), t.p("a", "abs"))
    os.symlink("b", t.p("a", "lb"))
    t.eq(t.read(t.p("a", "b", "up")), b"in a", "relative ../file from a/b")
    t.eq(t.read(t.p("a", "b", "up2")), b"top", "relative ../../top")
    t.eq(t.read(t.p("a", "abs")), b"top", "absolute target")
    t.eq(t.read(t.p("a", "lb", "up")), b"in a", "through a dir link, relative to the link's dir")
    t.eq(os.path.isdir(t.p("a", "lb") + "/"), True, "link/ follows to the dir")
    t.eq(sorted(os.listdir(t.p("a", "lb"))), ["up", "up2"], "listing through a dir link")


@case
def symlink_perms_and_owner(t):
    t.user_err(E.EACCES, lambda: os.symlink("x", t.p("u")), "symlink in a 0755 root dir")
    t.absent(t.p("u"))
    pub = open_dir_for_all(t)
    link = os.path.join(pub, "l")
    t.user_ok(lambda: os.symlink("target", link), "symlink in a 0777 dir")
    lst = os.lstat(link)
    t.eq((lst.st_uid, lst.st_gid), (NOBODY, NOBODY), "owner of the new link")
    t.eq_mode(stat.S_IMODE(lst.st_mode), 0o777, "a symlink's mode is 0777")
    t.user_ok(lambda: os.readlink(link), "readlink by its owner")
    t.eq(t.user_ok(lambda: os.readlink(link), "readlink by another user", uid=4242, gid=4242),
         "target", "readlink by another user")


@case
def symlink_unlink_removes_link_only(t):
    t.mkfile("target", b"keep")
    t.mkdir("dir")
    t.mkfile("dir/inside", b"in")
    os.symlink("target", t.p("l"))
    os.symlink("dir", t.p("ld"))
    t.ok(os.unlink, t.p("l"), what="unlink a link to a file")
    t.ok(os.unlink, t.p("ld"), what="unlink a link to a dir")
    t.eq(t.read(t.p("target")), b"keep", "target kept")
    t.eq(os.listdir(t.p("dir")), ["inside"], "dir kept")
    t.eq(sorted(os.listdir(t.d)), ["dir", "target"], "only the links went")


# ---------------------------------------------------------------------------------------------
# truncate


@case
def truncate_grow_zeros(t):
    f = t.mkfile("f", b"abc")
    for size in (4, 100, 4096, 4097, 65536, 1 << 20, (8 << 20) + 3):
        t.ok(os.truncate, f, size, what="truncate up to %d" % size)
        t.eq(os.stat(f).st_size, size, "size after growing to %d" % size)
    data = t.read(f)
    t.eq(data[:3], b"abc", "head kept when growing")
    t.eq(len(data) - 3 - data[3:].count(0), 0, "the grown part is all zeros")


@case
def truncate_shrink(t):
    f = t.mkfile("f", bytes(range(256)) * 40)
    for size in (10000, 4096, 4095, 100, 1):
        t.ok(os.truncate, f, size, what="truncate down to %d" % size)
        t.eq(t.read(f), (bytes(range(256)) * 40)[:size], "content after shrinking to %d" % size)
    t.ok(os.truncate, f, 0, what="truncate to 0")
    t.eq(os.stat(f).st_size, 0, "size 0")


@case
def truncate_shrink_then_grow(t):
    f = t.mkfile("f", b"\xff" * 10000)
    os.truncate(f, 100)
    os.truncate(f, 10000)
    data = t.read(f)
    t.eq(data[:100], b"\xff" * 100, "kept head")
    t.eq(data[100:], b"\0" * 9900, "old bytes do not come back after shrink+grow")
    fd = os.open(f, os.O_RDWR)
    try:
        os.ftruncate(fd, 50)
        os.pwrite(fd, b"Z", 60)
    finally:
        os.close(fd)
    t.eq(t.read(f), b"\xff" * 50 + b"\0" * 10 + b"Z", "write past a shrunk EOF")


@case
def truncate_ftruncate(t):
    f = t.mkfile("f", b"0123456789")
    fd = os.open(f, os.O_RDWR)
    try:
        t.ok(os.ftruncate, fd, 4, what="ftruncate down")
        t.eq(os.fstat(fd).st_size, 4, "fstat size after ftruncate")
        t.eq(os.pread(fd, 100, 0), b"0123", "content through the fd")
        t.ok(os.ftruncate, fd, 8, what="ftruncate up")
        t.eq(os.pread(fd, 100, 0), b"0123\0\0\0\0", "zeros after ftruncate up")
        t.eq(os.lseek(fd, 0, os.SEEK_CUR), 0, "ftruncate leaves the offset")
    finally:
        os.close(fd)
    t.eq(t.read(f), b"0123\0\0\0\0", "content by path")
    fd = os.open(f, os.O_RDONLY)
    try:
        t.err((E.EINVAL, E.EBADF), os.ftruncate, fd, 0, what="ftruncate of an O_RDONLY fd")
    finally:
        os.close(fd)
    t.eq(os.stat(f).st_size, 8, "size after the refused ftruncate")


@case
def truncate_errors(t):
    t.mkfile("f", b"abc")
    t.mkdir("d")
    t.err(E.EISDIR, os.truncate, t.p("d"), 0, what="truncate a dir")
    t.err(E.ENOENT, os.truncate, t.p("missing"), 0, what="truncate a missing file")
    t.err(E.ENOTDIR, os.truncate, t.p("f", "x"), 0, what="truncate below a file")
    t.err(E.EINVAL, os.truncate, t.p("f"), -1, what="truncate to a negative size")
    t.eq(t.read(t.p("f")), b"abc", "content after refusals")
    t.absent(t.p("missing"))


@case
def truncate_nonroot(t):
    ro = t.mkfile("ro", b"abc", mode=0o644)
    rw = t.mkfile("rw", b"abc", mode=0o666)
    t.user_err(E.EACCES, lambda: os.truncate(ro, 0), "truncate a 0644 root file")
    t.user_ok(lambda: os.truncate(rw, 1), "truncate a 0666 root file")
    t.eq(t.read(ro), b"abc", "refused truncate kept the content")
    t.eq(t.read(rw), b"a", "allowed truncate")


@case
def truncate_updates_times(t):
    f = t.mkfile("f", b"x" * 100)
    for size in (50, 5000):
        before = os.stat(f)
        t.tick()
        os.truncate(f, size)
        after = os.stat(f)
        t.later(before.st_mtime_ns, after.st_mtime_ns, "mtime after truncate to %d" % size)
        t.later(before.st_ctime_ns, after.st_ctime_ns, "ctime after truncate to %d" % size)


@case
def truncate_seen_by_open_fd(t):
    f = t.mkfile("f", b"x" * 1000)
    fd = os.open(f, os.O_RDONLY)
    try:
        os.truncate(f, 10)
        t.eq(os.fstat(fd).st_size, 10, "fstat of an open fd after truncate by path")
        t.eq(os.pread(fd, 100, 0), b"x" * 10, "read through the open fd after truncate")
        t.eq(os.pread(fd, 100, 500), b"", "read past the new EOF")
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------------------------
# unlink


@case
def unlink_basic(t):
    f = t.mkfile("f", b"x")
    before = os.stat(t.d)
    t.tick()
    t.must(os.unlink, f)
    t.absent(f)
    after = os.stat(t.d)
    t.later(before.st_mtime_ns, after.st_mtime_ns, "parent mtime after unlink")
    t.later(before.st_ctime_ns, after.st_ctime_ns, "parent ctime after unlink")
    t.eq(os.listdir(t.d), [], "listing after unlink")
    t.mkfile("f", b"new")
    t.eq(t.read(f), b"new", "a new file at the same name")


@case
def unlink_open_file(t):
    f = t.mkfile("f", b"still here")
    fd = os.open(f, os.O_RDWR)
    try:
        t.must(os.unlink, f)
        t.absent(f)
        t.eq(os.listdir(t.d), [], "not listed after unlink")
        t.eq(os.pread(fd, 100, 0), b"still here", "read through the fd after unlink")
        st = os.fstat(fd)
        t.eq(st.st_nlink, 0, "fstat nlink after unlink")
        t.eq(st.st_size, 10, "fstat size after unlink")
        os.pwrite(fd, b" and more", 10)
        t.eq(os.pread(fd, 100, 0), b"still here and more", "write+read after unlink")
        os.ftruncate(fd, 5)
        t.eq(os.pread(fd, 100, 0), b"still", "ftruncate after unlink")
        t.ok(os.fsync, fd, what="fsync after unlink")
        g = t.mkfile("f", b"other")
        t.eq(t.read(g), b"other", "a new file at the unlinked name")
        t.eq(os.pread(fd, 100, 0), b"still", "the fd still reads the unlinked file")
    finally:
        os.close(fd)
    t.eq(t.read(t.p("f")), b"other", "the new file after closing the old fd")


@case
def unlink_open_file_big(t):
    f = t.p("big")
    data = os.urandom(1 << 20) * 3
    with open(f, "wb") as w:
        w.write(data)
    fd = os.open(f, os.O_RDONLY)
    try:
        os.unlink(f)
        got = b""
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            got += b
        t.eq(got == data, True, "3 MiB read through the fd after unlink")
    finally:
        os.close(fd)
    t.absent(f)


@case
def unlink_errors(t):
    t.mkdir("d")
    t.mkfile("f")
    t.err((E.EISDIR, E.EPERM), os.unlink, t.p("d"), what="unlink a dir")
    t.err(E.ENOENT, os.unlink, t.p("missing"), what="unlink a missing file")
    t.err(E.ENOTDIR, os.unlink, t.p("f", "x"), what="unlink below a file")
    t.err(E.ENOTDIR, os.unlink, t.p("f") + "/", what="unlink of file/ (trailing /)")
    t.err(E.ENAMETOOLONG, os.unlink, t.p("n" * 256), what="unlink a 256-byte name")
    t.eq(sorted(os.listdir(t.d)), ["d", "f"], "nothing removed")


@case
def unlink_nonroot(t):
    f = t.mkfile("f", mode=0o666)
    t.user_err(E.EACCES, lambda: os.unlink(f), "unlink in a 0755 root dir")
    pub = open_dir_for_all(t)
    t.mkfile("pub/roots", mode=0o600)
    t.user_ok(lambda: os.unlink(os.path.join(pub, "roots")),
              "unlink another user's file in a 0777 (non-sticky) dir")
    sticky = t.mkdir("sticky", 0o777)
    os.chmod(sticky, 0o1777)
    t.mkfile("sticky/roots", mode=0o666)
    t.mkfile("sticky/mine")
    os.chown(t.p("sticky", "mine"), NOBODY, NOBODY)
    t.user_err((E.EPERM, E.EACCES), lambda: os.unlink(t.p("sticky", "roots")),
               "unlink another user's file in a sticky dir")
    t.user_ok(lambda: os.unlink(t.p("sticky", "mine")), "unlink one's own file in a sticky dir")
    t.mkfile("sticky/theirs")
    os.chown(t.p("sticky", "theirs"), NOBODY, NOBODY)
    t.ok(os.unlink, t.p("sticky", "theirs"), what="root unlinks anything in a sticky dir")
    t.eq(os.listdir(sticky), ["roots"], "sticky dir listing")
    t.exists(f)


@case
def unlink_many(t):
    for i in range(200):
        t.mkfile("f%03d" % i)
    for i in range(0, 200, 2):
        os.unlink(t.p("f%03d" % i))
    t.eq(sorted(os.listdir(t.d)), ["f%03d" % i for i in range(1, 200, 2)],
         "listing after unlinking every other file of 200")


# ---------------------------------------------------------------------------------------------
# utimensat


@case
def utimensat_explicit(t):
    f = t.mkfile("f")
    for atime, mtime in ((1_000_000_000_123_456_789, 1_100_000_000_987_654_321),
                         (0, 0), (1, 999_999_999), (4_102_444_800_000_000_000, 86_400_500_000_000),
                         (1_700_000_000_000_000_000, 1_700_000_000_001_000_000)):
        if not t.did(utimensat, f, atime, mtime, what="utimensat %d %d" % (atime, mtime)):
            continue
        st = os.stat(f)
        t.same_time(st.st_atime_ns, atime, "atime after utimensat")
        t.same_time(st.st_mtime_ns, mtime, "mtime after utimensat")
    t.ok(os.utime, f, ns=(1_234_567_890_000_000_000, 1_234_567_891_000_000_000),
         what="os.utime(ns=)")
    t.same_time(os.stat(f).st_mtime_ns, 1_234_567_891_000_000_000, "mtime after os.utime")
    d = t.mkdir("d")
    t.ok(utimensat, d, 1_500_000_000_000_000_000, 1_600_000_000_000_000_000, what="utimensat dir")
    t.same_time(os.stat(d).st_mtime_ns, 1_600_000_000_000_000_000, "dir mtime after utimensat")


@case
def utimensat_rounding(t):
    f = t.mkfile("f")
    g = t.profile.time_granularity_ns
    want = 1_600_000_000_123_456_789
    utimensat(f, want, want)
    got = os.stat(f).st_mtime_ns
    t.same_time(got, want, "mtime with nanoseconds")
    t.check(got <= want, "stored time rounded down, not up", "<= %d" % want, str(got))
    t.eq(got % g, 0, "stored mtime is a multiple of the granularity %d ns" % g)


@case
def utimensat_now(t):
    f = t.mkfile("f")
    utimensat(f, 1_000_000_000_000_000_000, 1_000_000_000_000_000_000)
    lo = time.time_ns()
    t.ok(utimensat, f, "now", "now", what="UTIME_NOW for both")
    hi = time.time_ns()
    st = os.stat(f)
    t.near_now(st.st_atime_ns, lo, hi, "atime after UTIME_NOW")
    t.near_now(st.st_mtime_ns, lo, hi, "mtime after UTIME_NOW")
    utimensat(f, 1_000_000_000_000_000_000, 1_000_000_000_000_000_000)
    lo = time.time_ns()
    t.ok(os.utime, f, None, what="os.utime(None)")
    hi = time.time_ns()
    t.near_now(os.stat(f).st_mtime_ns, lo, hi, "mtime after utime(NULL)")


@case
def utimensat_omit(t):
    f = t.mkfile("f")
    a0, m0 = 1_100_000_000_000_000_000, 1_200_000_000_000_000_000
    utimensat(f, a0, m0)
    t.ok(utimensat, f, "omit", 1_300_000_000_000_000_000, what="UTIME_OMIT atime")
    st = os.stat(f)
    t.same_time(st.st_atime_ns, a0, "atime kept by UTIME_OMIT")
    t.same_time(st.st_mtime_ns, 1_300_000_000_000_000_000, "mtime set beside UTIME_OMIT")
    t.ok(utimensat, f, 1_400_000_000_000_000_000, "omit", what="UTIME_OMIT mtime")
    st = os.stat(f)
    t.same_time(st.st_atime_ns, 1_400_000_000_000_000_000, "atime set beside UTIME_OMIT")
    t.same_time(st.st_mtime_ns, 1_300_000_000_000_000_000, "mtime kept by UTIME_OMIT")
    before = os.stat(f)
    t.tick()
    t.ok(utimensat, f, "omit", "omit", what="UTIME_OMIT for both")
    st = os.stat(f)
    t.same_time(st.st_atime_ns, before.st_atime_ns, "atime after omit/omit")
    t.same_time(st.st_mtime_ns, before.st_mtime_ns, "mtime after omit/omit")
    lo = time.time_ns()
    t.ok(utimensat, f, "omit", "now", what="UTIME_OMIT atime, UTIME_NOW mtime")
    hi = time.time_ns()
    st = os.stat(f)
    t.same_time(st.st_atime_ns, 1_400_000_000_000_000_000, "atime kept beside UTIME_NOW")
    t.near_now(st.st_mtime_ns, lo, hi, "mtime now beside UTIME_OMIT")


@case
def utimensat_symlink_nofollow(t):
    f = t.mkfile("target")
    link = t.p("link")
    os.symlink("target", link)
    utimensat(f, 1_000_000_000_000_000_000, 1_000_000_000_000_000_000)
    t.ok(utimensat, link, 1_500_000_000_000_000_000, 1_500_000_000_000_000_000, nofollow=True,
         what="utimensat AT_SYMLINK_NOFOLLOW")
    t.same_time(os.lstat(link).st_mtime_ns, 1_500_000_000_000_000_000, "link mtime")
    t.same_time(os.stat(f).st_mtime_ns, 1_000_000_000_000_000_000, "target mtime untouched")
    t.ok(utimensat, link, 1_600_000_000_000_000_000, 1_600_000_000_000_000_000,
         what="utimensat following the link")
    t.same_time(os.stat(f).st_mtime_ns, 1_600_000_000_000_000_000, "target mtime via the link")
    t.same_time(os.lstat(link).st_mtime_ns, 1_500_000_000_000_000_000, "link mtime kept")


@case
def utimensat_errors(t):
    t.mkfile("f")
    t.err(E.ENOENT, utimensat, t.p("missing"), 0, 0, what="utimensat of a missing file")
    t.err(E.ENOTDIR, utimensat, t.p("f", "x"), 0, 0, what="utimensat below a file")
    t.err(E.ENAMETOOLONG, utimensat, t.p("n" * 256), 0, 0, what="utimensat of a 256-byte name")
    os.symlink("missing", t.p("dangling"))
    t.err(E.ENOENT, utimensat, t.p("dangling"), 0, 0, what="utimensat through a dangling link")


@case
def utimensat_nonroot(t):
    other_rw = t.mkfile("other_rw", mode=0o666)
    other_ro = t.mkfile("other_ro", mode=0o644)
    mine = t.mkfile("mine", mode=0o400)
    os.chown(mine, NOBODY, NOBODY)
    utimensat(other_rw, 1_000_000_000_000_000_000, 1_000_000_000_000_000_000)
    t.user_ok(lambda: utimensat(other_rw, "now", "now"),
              "UTIME_NOW by a non-owner with write access")
    t.check(os.stat(other_rw).st_mtime_ns > 1_500_000_000_000_000_000,
            "mtime after UTIME_NOW by a non-owner", "now", str(os.stat(other_rw).st_mtime_ns))
    t.user_err(E.EPERM, lambda: utimensat(other_rw, 5, 5),
               "explicit times by a non-owner with write access")
    t.user_err(E.EACCES, lambda: utimensat(other_ro, "now", "now"),
               "UTIME_NOW by a non-owner without write access")
    t.user_err(E.EPERM, lambda: utimensat(other_ro, 5, 5),
               "explicit times by a non-owner without write access")
    t.user_ok(lambda: utimensat(mine, 2_000_000_000_000_000_000, 2_000_000_000_000_000_000),
              "explicit times by the owner of a 0400 file")
    t.same_time(os.stat(mine).st_mtime_ns, 2_000_000_000_000_000_000, "owner-set mtime")
    t.user_ok(lambda: utimensat(mine, "omit", "omit"), "UTIME_OMIT by the owner")


@case
def utimensat_updates_ctime(t):
    f = t.mkfile("f")
    before = os.stat(f)
    t.tick()
    utimensat(f, 1_000_000_000_000_000_000, 1_000_000_000_000_000_000)
    t.ctime_later(before.st_ctime_ns, os.stat(f).st_ctime_ns, "ctime after utimensat")
    if t.profile.ctime_on_metadata:  # a mount that reports ctime = mtime cannot pass this
        t.check(os.stat(f).st_ctime_ns > 1_000_000_000_000_000_000 + 10**18 // 2,
                "ctime is not set to the explicit time", "about now",
                str(os.stat(f).st_ctime_ns))


# ---------------------------------------------------------------------------------------------
# timestamps


@case
def timestamps_new_file(t):
    lo = time.time_ns()
    f = t.mkfile("f")
    hi = time.time_ns()
    st = os.stat(f)
    t.near_now(st.st_mtime_ns, lo, hi, "mtime of a new file")
    t.near_now(st.st_ctime_ns, lo, hi, "ctime of a new file")
    t.near_now(st.st_atime_ns, lo, hi, "atime of a new file")
    lo = time.time_ns()
    d = t.mkdir("d")
    hi = time.time_ns()
    t.near_now(os.stat(d).st_mtime_ns, lo, hi, "mtime of a new dir")
    lo = time.time_ns()
    os.symlink("x", t.p("l"))
    hi = time.time_ns()
    t.near_now(os.lstat(t.p("l")).st_mtime_ns, lo, hi, "mtime of a new symlink")


@case
def timestamps_write(t):
    f = t.mkfile("f", b"abc")
    fd = os.open(f, os.O_RDWR)
    try:
        before = os.fstat(fd)
        t.tick()
        os.pwrite(fd, b"x", 1)
        mid = os.fstat(fd)
        t.later(before.st_mtime_ns, mid.st_mtime_ns, "mtime after write (fstat, fd open)")
        t.later(before.st_ctime_ns, mid.st_ctime_ns, "ctime after write (fstat, fd open)")
        t.later(before.st_mtime_ns, os.stat(f).st_mtime_ns, "mtime after write (stat, fd open)")
        t.tick()
        os.pwrite(fd, b"y", 10)
        t.later(mid.st_mtime_ns, os.fstat(fd).st_mtime_ns, "mtime after a second write")
    finally:
        os.close(fd)
    after_close = os.stat(f)
    t.tick()
    t.eq(os.stat(f).st_mtime_ns, after_close.st_mtime_ns, "mtime stable after close")


@case
def timestamps_read_keeps_mtime(t):
    f = t.mkfile("f", b"abc" * 1000)
    utimensat(f, 1_000_000_000_000_000_000, 1_100_000_000_000_000_000)
    before = os.stat(f)
    t.tick()
    t.read(f)
    after = os.stat(f)
    t.eq(after.st_mtime_ns, before.st_mtime_ns, "mtime unchanged by read")
    t.eq(after.st_ctime_ns, before.st_ctime_ns, "ctime unchanged by read")
    fd = os.open(f, os.O_RDWR)
    os.close(fd)
    t.eq(os.stat(f).st_mtime_ns, before.st_mtime_ns, "mtime unchanged by open+close for write")


@case
def timestamps_dir_on_create_and_unlink(t):
    d = t.mkdir("d")
    for what, fn in (
            ("create", lambda: t.mkfile("d/f")),
            ("symlink", lambda: os.symlink("x", t.p("d", "l"))),
            ("mkdir", lambda: os.mkdir(t.p("d", "sub"))),
            ("rename within", lambda: os.rename(t.p("d", "f"), t.p("d", "g"))),
            ("unlink", lambda: os.unlink(t.p("d", "g"))),
            ("unlink symlink", lambda: os.unlink(t.p("d", "l"))),
            ("rmdir", lambda: os.rmdir(t.p("d", "sub")))):
        before = os.stat(d)
        t.tick()
        fn()
        after = os.stat(d)
        t.later(before.st_mtime_ns, after.st_mtime_ns, "dir mtime after %s" % what)
        t.later(before.st_ctime_ns, after.st_ctime_ns, "dir ctime after %s" % what)


@case
def timestamps_dir_unchanged_by_file_write(t):
    d = t.mkdir("d")
    f = t.mkfile("d/f")
    before = os.stat(d)
    t.tick()
    write_at(f, 0, b"data")
    os.truncate(f, 2)
    os.chmod(f, 0o600)
    after = os.stat(d)
    t.eq(after.st_mtime_ns, before.st_mtime_ns, "dir mtime unchanged by writes to its file")


@case
def timestamps_mtime_survives_rename_and_chmod(t):
    f = t.mkfile("f", b"x")
    utimensat(f, 1_000_000_000_000_000_000, 1_111_111_111_000_000_000)
    os.rename(f, t.p("g"))
    os.chmod(t.p("g"), 0o600)
    t.same_time(os.stat(t.p("g")).st_mtime_ns, 1_111_111_111_000_000_000,
                "explicit mtime kept across rename and chmod")


# ---------------------------------------------------------------------------------------------
# names


@case
def names_length_limits(t):
    n255, n256 = "a" * 255, "a" * 256
    t.ok(open_close, t.p(n255), os.O_CREAT | os.O_WRONLY, what="create a 255-byte name")
    t.ok(os.mkdir, t.p("d" * 255), what="mkdir a 255-byte name")
    t.ok(os.symlink, "x", t.p("l" * 255), what="symlink a 255-byte name")
    t.ok(os.stat, t.p(n255), what="stat a 255-byte name")
    t.eq(sorted(os.listdir(t.d)), sorted([n255, "d" * 255, "l" * 255]), "listing of long names")
    t.ok(os.rename, t.p(n255), t.p("b" * 255), what="rename to a 255-byte name")
    t.err(E.ENAMETOOLONG, open_close, t.p(n256), os.O_CREAT | os.O_WRONLY,
          what="create a 256-byte name")
    t.err(E.ENAMETOOLONG, os.stat, t.p(n256), what="stat a 256-byte name")
    t.err(E.ENAMETOOLONG, os.lstat, t.p(n256), what="lstat a 256-byte name")
    t.err(E.ENAMETOOLONG, os.mkdir, t.p(n256), what="mkdir a 256-byte name")
    t.err(E.ENAMETOOLONG, os.symlink, "x", t.p(n256), what="symlink a 256-byte name")
    t.err(E.ENAMETOOLONG, os.rename, t.p("b" * 255), t.p(n256), what="rename to 256 bytes")
    t.err(E.ENAMETOOLONG, os.chmod, t.p(n256), 0o644, what="chmod a 256-byte name")
    t.err(E.ENAMETOOLONG, os.stat, t.p("d" * 255, n256), what="stat a 256-byte name in a dir")
    t.eq(sorted(os.listdir(t.d)), sorted(["b" * 255, "d" * 255, "l" * 255]),
         "no 256-byte entry appeared")


@case
def names_multibyte_length(t):
    ok = "é" * 127  # 254 bytes
    ok2 = "€" * 85  # 255 bytes
    bad = "€" * 86  # 258 bytes, 86 characters
    t.ok(open_close, t.p(ok), os.O_CREAT | os.O_WRONLY, what="254-byte UTF-8 name")
    t.ok(open_close, t.p(ok2), os.O_CREAT | os.O_WRONLY, what="255-byte UTF-8 name")
    t.err(E.ENAMETOOLONG, open_close, t.p(bad), os.O_CREAT | os.O_WRONLY,
          what="258-byte name of 86 characters")
    t.eq(sorted(os.listdir(t.d)), sorted([ok, ok2]), "listing of UTF-8 names")


@case
def names_special_characters(t):
    refused = ["tab\tname", "new\nline", "back\\slash"]
    for n in list(refused):
        if t.expect_unsupported("control_or_backslash_name", open_close, t.p(n),
                                os.O_CREAT | os.O_WRONLY, leaves=(t.p(n),)):
            continue
        refused.remove(n)
    names = ["space name", "quote'\"", "a:b", "*?[]",
             "#hash", "%25percent", "&amp;", "ünïcødé", "日本語", "emoji-😀",
             "-leading-dash",
             ".hidden", "...", "trailing.", "a" * 200 + ".txt", "CASE", "case", "+plus",
             "~tilde", "$dollar", "semi;colon", "comma,", "eq=", "at@", "{brace}", "|pipe",
             "<>", "!bang", "\u00a0nbsp", "\u200bzwsp"]
    names += [n for n in ["tab\tname", "new\nline", "back\\slash"] if n not in refused]
    for n in names:
        if t.did(open_close, t.p(n), os.O_CREAT | os.O_WRONLY, what="create %r" % n):
            write_at(t.p(n), 0, n.encode())
    t.eq(sorted(os.listdir(t.d)), sorted(names), "listing of special names")
    for n in names:
        t.eq(t.read(t.p(n)), n.encode(), "content of %r" % n)
    t.ok(os.mkdir, t.p("dir with space"), what="mkdir with a space")
    t.ok(os.rename, t.p("quote'\""), t.p("dir with space", "日本語 2"), what="rename special")
    t.eq(t.read(t.p("dir with space", "日本語 2")), b"quote'\"", "renamed special name")


@case
def names_non_utf8(t):
    raw = os.fsencode(t.d) + b"/bad-\xff\xfe-name"
    if t.expect_unsupported("non_utf8_name", open_close, raw, os.O_CREAT | os.O_WRONLY):
        t.eq(os.listdir(t.d), [], "nothing created by the refused name")
        return
    fd = t.ok(os.open, raw, os.O_CREAT | os.O_WRONLY, 0o644, what="create a non-UTF-8 name")
    if fd is None:
        return
    os.close(fd)
    t.eq(os.listdir(os.fsencode(t.d)), [b"bad-\xff\xfe-name"], "the non-UTF-8 name is listed")
    t.ok(os.unlink, raw, what="unlink a non-UTF-8 name")


@case
def names_dot_entries(t):
    t.mkdir("d")
    t.err(E.EEXIST, os.mkdir, t.p("d", "."), what="mkdir d/.")
    t.err(E.EEXIST, os.mkdir, t.p("d", ".."), what="mkdir d/..")
    t.err((E.EISDIR, E.EPERM), os.unlink, t.p("d", "."), what="unlink d/.")
    t.err((E.EISDIR, E.EPERM), os.unlink, t.p("d", ".."), what="unlink d/..")
    t.eq(os.stat(t.p("d", ".", ".", "..", "d")).st_ino, os.stat(t.p("d")).st_ino,
         "d/./../d resolves to d")


# ---------------------------------------------------------------------------------------------
# readdir, access, xattr


@case
def readdir_many(t):
    want = set()
    for i in range(500):
        n = "entry-%04d" % i
        t.mkfile(n)
        want.add(n)
    for i in range(20):
        os.mkdir(t.p("dir-%02d" % i))
        want.add("dir-%02d" % i)
    got = os.listdir(t.d)
    t.eq(len(got), len(want), "number of entries listed")
    t.eq(len(set(got)), len(got), "no entry listed twice")
    t.eq(set(got), want, "the listed names")
    kinds = {e.name: (e.is_dir(follow_symlinks=False), e.is_file(follow_symlinks=False))
             for e in os.scandir(t.d)}
    t.eq(all(kinds[n] == (True, False) for n in want if n.startswith("dir-")), True,
         "scandir types of dirs")
    t.eq(all(kinds[n] == (False, True) for n in want if n.startswith("entry-")), True,
         "scandir types of files")


@case
def readdir_types_and_ino(t):
    t.mkfile("f")
    t.mkdir("d")
    os.symlink("f", t.p("l"))
    for e in os.scandir(t.d):
        t.eq(e.inode(), os.lstat(e.path).st_ino, "d_ino of %s matches lstat" % e.name)
        want = {"f": "file", "d": "dir", "l": "symlink"}[e.name]
        got = ("symlink" if e.is_symlink() else "dir" if e.is_dir(follow_symlinks=False)
               else "file" if e.is_file(follow_symlinks=False) else "other")
        t.eq(got, want, "d_type of %s" % e.name)


@case
def readdir_during_changes(t):
    for i in range(100):
        t.mkfile("f%03d" % i)
    seen = []
    with os.scandir(t.d) as it:
        for i, e in enumerate(it):
            seen.append(e.name)
            if i == 10:
                os.unlink(t.p("f099")) if e.name != "f099" else None
                t.mkfile("new")
    # POSIX: entries removed or added during the scan may or may not appear; the rest must
    t.eq(len(seen), len(set(seen)), "no entry twice during concurrent changes")
    stable = {"f%03d" % i for i in range(99)}
    t.eq(stable - set(seen), set(), "every untouched entry listed once")


@case
def access_nonroot(t):
    t.need_drop()
    f = t.mkfile("f", mode=0o640)
    os.chown(f, 0, NOBODY)
    t.eq(t.user_ok(lambda: os.access(f, os.R_OK), "access R_OK"), True, "group may read")
    t.eq(t.user_ok(lambda: os.access(f, os.W_OK), "access W_OK"), False, "group may not write")
    t.eq(t.user_ok(lambda: os.access(f, os.X_OK), "access X_OK"), False, "no one may execute")
    t.eq(t.user_ok(lambda: os.access(f, os.F_OK), "access F_OK"), True, "exists")
    t.eq(t.user_ok(lambda: os.access(f, os.R_OK), "access as a stranger", gid=4242), False,
         "other may not read a 0640 file")
    t.eq(os.access(f, os.R_OK | os.W_OK), True, "root may read and write")
    t.eq(os.access(f, os.X_OK), False, "root may not execute a file without x bits")
    os.chmod(f, 0o100)
    t.eq(os.access(f, os.X_OK), True, "root may execute with one x bit")


@case
def xattr_user(t):
    f = t.mkfile("f", b"content")
    try:
        os.setxattr(f, "user.probe", b"1")
    except OSError as e:
        if e.errno in (E.ENOTSUP, E.ENOSYS):
            raise Skip("user xattrs are not supported here (%s)" % ename(e.errno)) from e
        raise
    t.asserts += 1
    t.eq(os.getxattr(f, "user.probe"), b"1", "getxattr")
    t.ok(os.setxattr, f, "user.bin", bytes(range(256)), what="setxattr binary")
    t.eq(os.getxattr(f, "user.bin"), bytes(range(256)), "binary xattr value")
    t.ok(os.setxattr, f, "user.empty", b"", what="setxattr empty value")
    t.eq(os.getxattr(f, "user.empty"), b"", "empty xattr value")
    t.eq(sorted(n for n in os.listxattr(f) if n.startswith("user.")),
         ["user.bin", "user.empty", "user.probe"], "listxattr")
    t.err(E.EEXIST, os.setxattr, f, "user.probe", b"2", os.XATTR_CREATE, what="XATTR_CREATE")
    t.err(E.ENODATA, os.setxattr, f, "user.nope", b"2", os.XATTR_REPLACE, what="XATTR_REPLACE")
    t.ok(os.setxattr, f, "user.probe", b"22", os.XATTR_REPLACE, what="replace a value")
    t.eq(os.getxattr(f, "user.probe"), b"22", "replaced value")
    t.err(E.ENODATA, os.getxattr, f, "user.missing", what="getxattr of a missing name")
    t.ok(os.removexattr, f, "user.probe", what="removexattr")
    t.err(E.ENODATA, os.getxattr, f, "user.probe", what="getxattr after removexattr")
    t.err(E.ENODATA, os.removexattr, f, "user.probe", what="removexattr twice")
    t.eq(t.read(f), b"content", "content unchanged by xattrs")
    os.rename(f, t.p("g"))
    t.eq(os.getxattr(t.p("g"), "user.bin"), bytes(range(256)), "xattr kept across rename")
    d = t.mkdir("d")
    t.ok(os.setxattr, d, "user.dir", b"on a dir", what="setxattr on a dir")
    t.eq(os.getxattr(d, "user.dir"), b"on a dir", "dir xattr")
    t.err(E.ERANGE, os.setxattr, f if os.path.exists(f) else t.p("g"), "user." + "n" * 251,
          b"x", what="xattr name over 255 bytes")


# ---------------------------------------------------------------------------------------------
# Running.


def probe_drop(run_dir):
    """(True, "") when a child dropped to uid 65534 can search run_dir, else (False, reason)."""
    if os.geteuid() != 0:
        return (False, "needs root to run checks as uid 65534")
    kind, val = as_user(lambda: os.listdir(run_dir) is not None)
    if kind == "ok":
        return (True, "")
    return (False, "uid 65534 cannot reach %s (%s): unprivileged checks skipped"
            % (run_dir, ename(val)))


def run_case(fn, run_dir, profile, opts, can_drop):
    name = fn.__name__
    d = os.path.join(run_dir, name)
    os.mkdir(d, 0o755)
    os.chmod(d, 0o755)
    t = T(name, d, profile, opts, can_drop)
    if name in profile.skip:
        return "skip", t, profile.skip[name]
    old_umask = os.umask(0)
    try:
        fn(t)
    except Skip as e:
        return "skip", t, str(e)
    except Abort:
        pass
    except OSError as e:
        t.fail("unexpected error", "no exception",
               "%s (%s) at %s" % (ename(e.errno), e.filename or "",
                                  traceback.extract_tb(e.__traceback__)[-1].lineno))
    except Exception as e:  # noqa: BLE001 - a bug in the case or an unexpected answer
        t.fail("unexpected exception", "none", "%r at line %d"
               % (e, traceback.extract_tb(e.__traceback__)[-1].lineno))
    finally:
        os.umask(old_umask)
    return ("fail" if t.failures else "ok"), t, None


def remove_tree(path):
    """rm -rf that also copes with modes that deny the owner (root ignores them anyway)."""
    def onerror(_fn, p, _exc):
        try:
            os.chmod(os.path.dirname(p), 0o755)
            if os.path.isdir(p) and not os.path.islink(p):
                os.chmod(p, 0o755)
                shutil.rmtree(p, ignore_errors=True)
            else:
                os.unlink(p)
        except OSError:
            pass
    shutil.rmtree(path, onerror=onerror)


def main():
    ap = argparse.ArgumentParser(
        description="POSIX conformance cases for a directory (written for xetstore mount).",
        epilog="Profiles: " + "; ".join("%s = %s" % (p.name, p.doc) for p in PROFILES.values()))
    ap.add_argument("dir", nargs="?", help="the directory to test in (a subdirectory is made)")
    ap.add_argument("--profile", choices=sorted(PROFILES), default="strict",
                    help="expected deviations from strict POSIX (default strict)")
    ap.add_argument("--list", action="store_true", help="list the case names and exit")
    ap.add_argument("-k", dest="pattern", action="append",
                    help="run only cases whose name contains PATTERN (repeatable: any)")
    ap.add_argument("--time-step", type=float, default=0.05,
                    help="seconds to sleep before a change whose timestamp must be later "
                         "(default 0.05)")
    ap.add_argument("--time-granularity-ns", type=int,
                    help="override the profile's timestamp granularity (ns)")
    ap.add_argument("--clock-slack", type=float, default=2.0,
                    help="seconds a 'now' timestamp may differ from this machine's clock")
    ap.add_argument("--keep", action="store_true", help="keep the case directories")
    ap.add_argument("--case-timeout", type=int, default=300,
                    help="seconds one case may take before the run stops as hung (default "
                         "300; 0: no limit)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every failure of a case")
    opts = ap.parse_args()

    cases = CASES
    if opts.pattern:
        cases = [c for c in CASES if any(p in c.__name__ for p in opts.pattern)]
    if opts.list:
        for c in cases:
            doc = (c.__doc__ or "").strip().splitlines()
            print(c.__name__ + ("  - " + doc[0] if doc else ""))
        return 0
    if not opts.dir:
        ap.error("DIR is required (or --list)")
    if not os.path.isdir(opts.dir):
        ap.error("%s is not a directory" % opts.dir)
    if not cases:
        ap.error("no case matches %s" % opts.pattern)
    profile = PROFILES[opts.profile]
    if opts.time_granularity_ns:
        profile.time_granularity_ns = opts.time_granularity_ns

    base = os.path.abspath(opts.dir)
    run_dir = os.path.join(base, "posix-%d" % os.getpid())
    os.mkdir(run_dir, 0o755)
    os.chmod(run_dir, 0o755)
    for line in profile.describe():
        print("# " + line)
    print("# running %d cases in %s as uid %d" % (len(cases), run_dir, os.geteuid()), flush=True)

    restore_mode = None
    can_drop = probe_drop(run_dir)
    if not can_drop[0] and os.geteuid() == 0:
        st = os.stat(base)
        if not st.st_mode & stat.S_IXOTH:
            restore_mode = stat.S_IMODE(st.st_mode)
            os.chmod(base, restore_mode | stat.S_IXOTH)
            print("# added o+x to %s for the run (uid 65534 must reach it); restored after" % base)
            can_drop = probe_drop(run_dir)
    if not can_drop[0]:
        print("# note: " + can_drop[1])

    passed = failed = skipped = asserts = 0
    skips = []

    def closing():
        return "%d passed, %d failed%s" % (passed, failed + 1,
                                          ", %d skipped" % skipped if skipped else "")

    watchdog = Watchdog(opts.case_timeout, lambda: print(closing(), flush=True))
    try:
        for fn in cases:
            watchdog.begin(fn.__name__)
            status, t, reason = run_case(fn, run_dir, profile, opts, can_drop)
            watchdog.end()
            asserts += t.asserts
            if status == "ok":
                passed += 1
                print("ok %s" % fn.__name__, flush=True)
            elif status == "skip":
                skipped += 1
                skips.append((fn.__name__, reason))
                print("skip %s: %s" % (fn.__name__, reason), flush=True)
            else:
                failed += 1
                more = len(t.failures) - 1
                print("FAIL %s: %s%s" % (fn.__name__, t.failures[0],
                                         " (+%d more)" % more if more else ""), flush=True)
                for f in t.failures[1:] if opts.verbose else t.failures[1:5]:
                    print("    also: %s" % f)
    finally:
        if restore_mode is not None:
            os.chmod(base, restore_mode)
        if not opts.keep:
            remove_tree(run_dir)
    print("# %d assertions in %d cases" % (asserts, len(cases)))
    if skips:
        reasons = {}
        for name, reason in skips:
            reasons.setdefault(reason, []).append(name)
        for reason, names in reasons.items():
            print("# skipped (%s): %s" % (reason, ", ".join(names)))
    print("%d passed, %d failed%s" % (passed, failed, ", %d skipped" % skipped if skipped else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
