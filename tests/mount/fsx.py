#!/usr/bin/env python3
"""Random-operation file-system tester: one seeded sequence applied to two directories.

  tests/mount/fsx.py --seed S --ops N DIR REFDIR
  tests/mount/fsx.py --seed S --ops N --remount-cmd 'CMD' DIR REFDIR
  tests/mount/fsx.py --replay LOG DIR REFDIR

DIR is the file system under test (a `xetstore mount`), REFDIR a local directory (ext4/tmpfs)
that serves as the reference. Both get a fresh subdirectory fsx-S/ (removed first if it is
there, and at the end unless --keep or a mismatch). Every operation runs on both sides and
the results are compared at once (return value or errno, bytes read, stat fields); at a
checkpoint every --check-every operations, at every remount and at the end the whole trees
are compared (names, types, sizes, modes, owners, SHA-256 of contents, symlink targets) and
so are the sizes of the files held open.

Operations: create (O_CREAT|O_EXCL, some kept open), open (O_RDWR, sometimes O_APPEND or
O_TRUNC; a few files stay open across many operations), write at random offsets through an
open file (overlapping, past EOF making holes), write by path, append (through an O_APPEND
file and by path), read (ranges through open files, whole files by path), truncate and
ftruncate (grow and shrink), fsync, fstat, close, rename (files and directories, onto new
names, over existing files and directories, into their own subdirectory; also files held
open), unlink (also of files held open, which must stay readable), mkdir, rmdir (also of
non-empty directories), symlink, readlink, chmod, utime (explicit ms times, read back),
lstat, listdir. The choices come from the seed and the reference tree only, so a seed
replays the same sequence.

--remount-cmd CMD: at --remounts random points (default 3) every open file is closed on both
sides, CMD runs under `sh -c` (it must unmount and remount DIR and exit 0; FSX_DIR holds DIR,
FSX_WORK its fsx-S subdirectory)
and the trees are compared again: data must survive a remount.

On a mismatch: the difference, the op log (JSON lines, replayable with --replay; the whole
log is also written to --log) and exit 1. Output ends with `N passed, N failed`, N counting
operations and checks.
"""

import argparse
import errno
import hashlib
import json
import os
import random
import shutil
import stat
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fs_watchdog import Watchdog  # noqa: E402

NAMES = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"]
MAX_DEPTH = 3
# errnos POSIX lets a file system pick between: compared as one
SAME_ERRNO = {errno.EEXIST: "ENOTEMPTY", errno.ENOTEMPTY: "ENOTEMPTY"}


def errname(e):
    return SAME_ERRNO.get(e) or errno.errorcode.get(e, str(e))


def gen_data(seed, n, kind):
    """Deterministic content: random, one repeated byte, or a short repeated text pattern."""
    r = random.Random(seed)
    if kind == 0:
        return r.randbytes(n)
    if kind == 1:
        return bytes([r.randrange(256)]) * n
    pat = ("%08x-" % r.getrandbits(32)).encode() * 8
    return (pat * (n // len(pat) + 1))[:n]


class Side:
    """One directory tree and its open files (handle id -> fd)."""

    def __init__(self, name, root):
        self.name = name
        self.root = root
        self.fds = {}

    def p(self, rel):
        return os.path.join(self.root, rel) if rel else self.root

    def close_all(self):
        for fd in self.fds.values():
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds.clear()


def stat_tuple(st, target=None):
    kind = ("dir" if stat.S_ISDIR(st.st_mode) else "file" if stat.S_ISREG(st.st_mode)
            else "symlink" if stat.S_ISLNK(st.st_mode) else "other")
    out = {"type": kind, "mode": "%04o" % stat.S_IMODE(st.st_mode), "uid": st.st_uid,
           "gid": st.st_gid}
    if kind == "file":
        out["size"] = st.st_size
    if kind == "symlink":
        out["target"] = target
    return out


def execute(op, side, meta):
    """Runs one op on one side. Returns a JSON-able result; errors as {"errno": NAME}."""
    k = op["op"]
    try:
        if k == "create":
            fd = os.open(side.p(op["path"]), os.O_CREAT | os.O_EXCL | os.O_RDWR, op["mode"])
            if op.get("h") is not None:
                side.fds[op["h"]] = fd
            else:
                os.close(fd)
            return "ok"
        if k == "open":
            flags = os.O_RDWR | (os.O_APPEND if op["append"] else 0) | (os.O_TRUNC if op["trunc"]
                                                                         else 0)
            side.fds[op["h"]] = os.open(side.p(op["path"]), flags)
            return "ok"
        if k == "close":
            fd = side.fds.pop(op["h"])
            os.close(fd)
            return "ok"
        if k == "write":
            data = gen_data(op["data"], op["len"], op["kind"])
            return os.pwrite(side.fds[op["h"]], data, op["off"])
        if k == "append":
            data = gen_data(op["data"], op["len"], op["kind"])
            fd = side.fds[op["h"]]
            n = os.write(fd, data)
            return [n, os.lseek(fd, 0, os.SEEK_CUR)]
        if k == "read":
            return os.pread(side.fds[op["h"]], op["len"], op["off"])
        if k == "ftruncate":
            os.ftruncate(side.fds[op["h"]], op["size"])
            return "ok"
        if k == "fsync":
            os.fsync(side.fds[op["h"]])
            return "ok"
        if k == "fstat":
            st = os.fstat(side.fds[op["h"]])
            return {"size": st.st_size, "mode": "%04o" % stat.S_IMODE(st.st_mode)}
        if k == "pwrite":
            data = gen_data(op["data"], op["len"], op["kind"])
            fd = os.open(side.p(op["path"]), os.O_WRONLY)
            try:
                return os.pwrite(fd, data, op["off"])
            finally:
                os.close(fd)
        if k == "appendp":
            data = gen_data(op["data"], op["len"], op["kind"])
            fd = os.open(side.p(op["path"]), os.O_WRONLY | os.O_APPEND)
            try:
                return os.write(fd, data)
            finally:
                os.close(fd)
        if k == "readp":
            with open(side.p(op["path"]), "rb") as f:
                return f.read()
        if k == "truncate":
            os.truncate(side.p(op["path"]), op["size"])
            return "ok"
        if k == "rename":
            os.rename(side.p(op["src"]), side.p(op["dst"]))
            return "ok"
        if k == "unlink":
            os.unlink(side.p(op["path"]))
            return "ok"
        if k == "mkdir":
            os.mkdir(side.p(op["path"]), op["mode"])
            return "ok"
        if k == "rmdir":
            os.rmdir(side.p(op["path"]))
            return "ok"
        if k == "symlink":
            os.symlink(op["target"], side.p(op["path"]))
            return "ok"
        if k == "readlink":
            return os.readlink(side.p(op["path"]))
        if k == "chmod":
            os.chmod(side.p(op["path"]), op["mode"])
            return "%04o" % stat.S_IMODE(os.stat(side.p(op["path"])).st_mode)
        if k == "utime":
            os.utime(side.p(op["path"]), ns=(op["atime"], op["mtime"]))
            return os.stat(side.p(op["path"])).st_mtime_ns
        if k == "lstat":
            path = side.p(op["path"])
            st = os.lstat(path)
            return stat_tuple(st, os.readlink(path) if stat.S_ISLNK(st.st_mode) else None)
        if k == "listdir":
            return sorted(os.listdir(side.p(op["path"])))
        raise ValueError("unknown op %r" % k)
    except OSError as e:
        return {"errno": errname(e.errno)}


def tree(root):
    """{relative path: description} of everything below root (root itself excluded)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            st = os.lstat(full)
            d = stat_tuple(st, os.readlink(full) if stat.S_ISLNK(st.st_mode) else None)
            if d["type"] == "file":
                h = hashlib.sha256()
                n = 0
                with open(full, "rb") as f:
                    for block in iter(lambda: f.read(1 << 20), b""):
                        h.update(block)
                        n += len(block)
                d["sha256"] = h.hexdigest()[:16]
                d["bytes read"] = n
            out[rel] = d
        dirnames[:] = [n for n in dirnames if not os.path.islink(os.path.join(dirpath, n))]
    return out


def describe(v):
    if isinstance(v, (bytes, bytearray)):
        return "%d bytes sha256 %s" % (len(v), hashlib.sha256(v).hexdigest()[:16])
    return json.dumps(v)


def first_diff(a, b):
    if isinstance(a, (bytes, bytearray)) and isinstance(b, (bytes, bytearray)):
        n = min(len(a), len(b))
        for i in range(n):
            if a[i] != b[i]:
                return " (first difference at byte %d: %d vs %d)" % (i, a[i], b[i])
        return " (one is a prefix of the other: %d vs %d bytes)" % (len(a), len(b))
    return ""


class Generator:
    """Chooses the next op from the seed and the reference tree (never from DIR)."""

    def __init__(self, rng, args, ref):
        self.rng = rng
        self.args = args
        self.ref = ref
        self.files, self.dirs, self.links = [], [""], []
        self.handles = {}  # id -> {"append": bool}
        self.next_h = 0
        self.rescan()

    def rescan(self):
        self.files, self.dirs, self.links = [], [""], []
        for dirpath, dirnames, filenames in os.walk(self.ref.root):
            for name in sorted(dirnames + filenames):
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, self.ref.root)
                st = os.lstat(full)
                if stat.S_ISLNK(st.st_mode):
                    self.links.append(rel)
                elif stat.S_ISDIR(st.st_mode):
                    self.dirs.append(rel)
                else:
                    self.files.append(rel)
            dirnames[:] = [n for n in dirnames if not os.path.islink(os.path.join(dirpath, n))]
        self.files.sort()
        self.dirs.sort()
        self.links.sort()

    def new_path(self):
        parents = [d for d in self.dirs if (d.count("/") + 1 if d else 0) < MAX_DEPTH]
        parent = self.rng.choice(parents)
        name = self.rng.choice(NAMES)
        return os.path.join(parent, name) if parent else name

    def any_path(self):
        pool = self.files + self.dirs[1:] + self.links
        if not pool or self.rng.random() < 0.1:
            return self.new_path()
        return self.rng.choice(pool)

    def file_or_new(self, p_new=0.05):
        if not self.files or self.rng.random() < p_new:
            return self.new_path()
        return self.rng.choice(self.files)

    def ref_size(self, h=None, path=None):
        try:
            if h is not None:
                return os.fstat(self.ref.fds[h]).st_size
            return os.stat(self.ref.p(path)).st_size
        except (OSError, KeyError):
            return 0

    def length(self):
        r = self.rng.random()
        if r < 0.6:
            n = self.rng.randint(1, 4096)
        elif r < 0.9:
            n = self.rng.randint(4097, 128 << 10)
        else:
            n = self.rng.randint((128 << 10) + 1, 1 << 20)
        return min(n, self.args.max_size)

    def offset(self, size, n):
        room = max(0, self.args.max_size - n)
        r = self.rng.random()
        if r < 0.5 and size:
            off = self.rng.randrange(size)  # overlapping existing data
        elif r < 0.8:
            off = max(0, size - self.rng.randint(0, 4096))  # around EOF
        else:
            off = self.rng.randint(0, room)  # anywhere: holes past EOF
        return min(off, room)

    def data(self, n):
        return {"len": n, "data": self.rng.getrandbits(32), "kind": self.rng.choice((0, 0, 1, 2))}

    def new_handle(self, path, append=False):
        h = self.next_h
        self.next_h += 1
        self.handles[h] = {"append": append, "path": path}
        return h

    def open_paths(self):
        """Paths (in the reference) of files held open that are still linked there."""
        out = []
        for h in sorted(self.handles):
            path = self.handles[h]["path"]
            fd = self.ref.fds.get(h)
            try:
                if fd is not None and os.lstat(self.ref.p(path)).st_ino == os.fstat(fd).st_ino:
                    out.append(path)
            except OSError:
                pass
        return out

    def next(self):
        rng = self.rng
        a = self.args
        weights = [
            ("create", 8), ("open", 6), ("close", 5), ("write", 14), ("append", 4), ("read", 8),
            ("ftruncate", 3), ("fsync", 2), ("fstat", 2), ("pwrite", 6), ("appendp", 3),
            ("readp", 6), ("truncate", 4), ("rename", 6), ("rename_dir", 3), ("unlink", 4),
            ("unlink_open", 1), ("rename_open", 2), ("mkdir", 3), ("rmdir", 2), ("symlink", 2),
            ("readlink", 1), ("chmod", 3), ("utime", 2), ("lstat", 3), ("listdir", 2),
        ]
        total = sum(w for _, w in weights)
        for _ in range(100):
            pick = rng.randrange(total)
            for kind, w in weights:
                if pick < w:
                    break
                pick -= w
            op = self.make(kind, rng, a)
            if op is not None:
                return op
        return {"op": "listdir", "path": ""}

    def make(self, kind, rng, a):
        hs = sorted(self.handles)
        plain = [h for h in hs if not self.handles[h]["append"]]
        apps = [h for h in hs if self.handles[h]["append"]]
        if kind == "create":
            if len(self.files) >= a.max_files:
                return None
            keep = len(self.handles) < a.max_open and rng.random() < 0.5
            path = self.new_path() if rng.random() < 0.9 else self.any_path()
            return {"op": "create", "path": path, "mode": rng.choice((0o644, 0o600, 0o755, 0o640)),
                    "h": self.new_handle(path) if keep else None}
        if kind == "open":
            if len(self.handles) >= a.max_open or not self.files:
                return None
            append = rng.random() < 0.25
            path = self.file_or_new()
            return {"op": "open", "path": path, "h": self.new_handle(path, append),
                    "append": append, "trunc": rng.random() < 0.05}
        if kind == "close":
            if not hs:
                return None
            h = rng.choice(hs)
            return {"op": "close", "h": h}
        if kind == "write":
            if not plain:
                return None
            h = rng.choice(plain)
            n = self.length()
            return dict({"op": "write", "h": h, "off": self.offset(self.ref_size(h=h), n)},
                        **self.data(n))
        if kind == "append":
            if not apps:
                return None
            h = rng.choice(apps)
            n = min(self.length(), a.max_size - self.ref_size(h=h))
            if n <= 0:
                return {"op": "ftruncate", "h": h, "size": rng.randint(0, a.max_size // 2)}
            return dict({"op": "append", "h": h}, **self.data(n))
        if kind == "read":
            if not hs:
                return None
            h = rng.choice(hs)
            size = self.ref_size(h=h)
            off = rng.randint(0, size + 100)
            return {"op": "read", "h": h, "off": off, "len": rng.choice((1, 100, 4096, 65536,
                                                                         1 << 20))}
        if kind == "ftruncate":
            if not hs:
                return None
            return {"op": "ftruncate", "h": rng.choice(hs), "size": self.trunc_size()}
        if kind == "fsync":
            return {"op": "fsync", "h": rng.choice(hs)} if hs else None
        if kind == "fstat":
            return {"op": "fstat", "h": rng.choice(hs)} if hs else None
        if kind == "pwrite":
            path = self.file_or_new()
            n = self.length()
            return dict({"op": "pwrite", "path": path,
                         "off": self.offset(self.ref_size(path=path), n)}, **self.data(n))
        if kind == "appendp":
            path = self.file_or_new()
            n = min(self.length(), a.max_size - self.ref_size(path=path))
            if n <= 0:
                return {"op": "truncate", "path": path, "size": self.trunc_size()}
            return dict({"op": "appendp", "path": path}, **self.data(n))
        if kind == "readp":
            return {"op": "readp", "path": self.file_or_new()}
        if kind == "truncate":
            return {"op": "truncate", "path": self.file_or_new(), "size": self.trunc_size()}
        if kind == "rename":
            src = self.any_path() if rng.random() < 0.2 else self.file_or_new()
            r = rng.random()
            if r < 0.3 and self.files:
                dst = rng.choice(self.files)  # over an existing file
            elif r < 0.4 and len(self.dirs) > 1:
                dst = rng.choice(self.dirs[1:])  # file over a dir: EISDIR
            else:
                dst = self.new_path()
            return {"op": "rename", "src": src, "dst": dst}
        if kind == "rename_dir":
            if len(self.dirs) < 2:
                return None
            src = rng.choice(self.dirs[1:])
            r = rng.random()
            if r < 0.25:
                dst = rng.choice(self.dirs[1:])  # over a dir: empty or not
            elif r < 0.35:
                dst = os.path.join(src, rng.choice(NAMES))  # into itself: EINVAL
            elif r < 0.45 and self.files:
                dst = rng.choice(self.files)  # over a file: ENOTDIR
            else:
                dst = self.new_path()
            return {"op": "rename", "src": src, "dst": dst}
        if kind in ("unlink_open", "rename_open"):
            held = self.open_paths()
            if not held:
                return None
            path = rng.choice(held)
            if kind == "unlink_open":
                return {"op": "unlink", "path": path}
            dst = rng.choice(self.files) if rng.random() < 0.3 and self.files else self.new_path()
            return {"op": "rename", "src": path, "dst": dst}
        if kind == "unlink":
            pool = self.files + self.links
            if not pool:
                return None
            path = rng.choice(pool) if rng.random() < 0.9 else self.any_path()
            return {"op": "unlink", "path": path}
        if kind == "mkdir":
            if len(self.dirs) > a.max_files // 2:
                return None
            return {"op": "mkdir", "path": self.new_path(), "mode": rng.choice((0o755, 0o700,
                                                                                 0o775))}
        if kind == "rmdir":
            if len(self.dirs) < 2:
                return None
            return {"op": "rmdir", "path": rng.choice(self.dirs[1:])}
        if kind == "symlink":
            if len(self.links) >= 8:
                return None
            path = self.new_path()
            # relative targets only (resolved inside the tree: a "../" never climbs out of it)
            choices = [rng.choice(NAMES), "/nonexistent/x", "a" * rng.randint(1, 300),
                       "../" * path.count("/") + self.any_path()]
            if "/" in path:
                choices.append("../" + rng.choice(NAMES))
            return {"op": "symlink", "target": rng.choice(choices), "path": path}
        if kind == "readlink":
            if not self.links:
                return None
            return {"op": "readlink", "path": rng.choice(self.links)}
        if kind == "chmod":
            pool = self.files + self.dirs[1:]
            if not pool:
                return None
            path = rng.choice(pool)
            if path in self.dirs:
                mode = 0o700 | rng.choice((0o000, 0o055, 0o050, 0o005, 0o077, 0o1000, 0o2000))
            else:
                mode = rng.choice((0o644, 0o600, 0o755, 0o000, 0o444, 0o4755, 0o2750, 0o1777))
            return {"op": "chmod", "path": path, "mode": mode}
        if kind == "utime":
            pool = self.files + self.dirs[1:]
            if not pool:
                return None
            ms = rng.randint(0, 4_000_000_000_000)  # whole milliseconds, 1970..2096
            return {"op": "utime", "path": rng.choice(pool), "atime": ms * 1_000_000,
                    "mtime": (ms + rng.randint(0, 10**6)) * 1_000_000}
        if kind == "lstat":
            return {"op": "lstat", "path": self.any_path()}
        if kind == "listdir":
            return {"op": "listdir", "path": rng.choice(self.dirs)}
        raise ValueError(kind)

    def trunc_size(self):
        r = self.rng.random()
        if r < 0.3:
            return 0
        if r < 0.7:
            return self.rng.randint(0, 64 << 10)
        return self.rng.randint(0, self.args.max_size)

    def applied(self, op, ref_result):
        """Updates the model after the op ran on the reference."""
        k = op["op"]
        failed = isinstance(ref_result, dict) and "errno" in ref_result
        if k in ("create", "open") and op.get("h") is not None and failed:
            self.handles.pop(op["h"], None)
        if k == "close":
            self.handles.pop(op["h"], None)
        if k == "remount":
            self.handles.clear()
        if k == "rename" and not failed:  # keep the paths of open files current
            for meta in self.handles.values():
                if meta["path"] == op["src"]:
                    meta["path"] = op["dst"]
                elif meta["path"].startswith(op["src"] + "/"):
                    meta["path"] = op["dst"] + meta["path"][len(op["src"]):]
        if k in ("create", "rename", "unlink", "mkdir", "rmdir", "symlink") and not failed:
            self.rescan()


class Runner:
    def __init__(self, args, dut, ref):
        self.args = args
        self.dut = dut
        self.ref = ref
        self.log = []
        self.passed = 0
        self.failed = 0
        self.watchdog = Watchdog(args.op_timeout, self.on_hang)
        self.kinds = {}  # op -> [count, errors]
        self.on_unlinked = 0  # ops through an fd whose file was unlinked

    def mismatch(self, what):
        self.failed += 1
        print("FAIL %s" % what, flush=True)

    def run_op(self, op, gen=None):
        self.log.append(op)
        idx = len(self.log)
        if op["op"] == "check":
            return self.check("checkpoint after op %d" % (idx - 1))
        if op["op"] == "remount":
            return self.remount(idx)
        self.watchdog.begin("#%d %s on %s" % (idx, op["op"], self.dut.root))
        got = execute(op, self.dut, None)
        self.watchdog.end()
        want = execute(op, self.ref, None)
        c = self.kinds.setdefault(op["op"], [0, 0])
        c[0] += 1
        if op.get("h") is not None and op["op"] not in ("create", "open", "close"):
            try:
                if os.fstat(self.ref.fds[op["h"]]).st_nlink == 0:
                    self.on_unlinked += 1
            except (OSError, KeyError):
                pass
        c[1] += isinstance(want, dict) and "errno" in want
        if gen is not None:
            gen.applied(op, want)
        if got != want:
            self.mismatch("op #%d %s: %s gave %s%s, %s gave %s"
                          % (idx, json.dumps(op), self.dut.name, describe(got),
                             first_diff(got, want), self.ref.name, describe(want)))
            return False
        self.passed += 1
        return True

    def check(self, what):
        self.watchdog.begin(what)
        a, b = tree(self.dut.root), tree(self.ref.root)
        problems = []
        for p in sorted(set(a) | set(b)):
            if p not in a:
                problems.append("%s: missing in %s (reference: %s)" % (p, self.dut.name,
                                                                      json.dumps(b[p])))
            elif p not in b:
                problems.append("%s: only in %s: %s" % (p, self.dut.name, json.dumps(a[p])))
            elif a[p] != b[p]:
                diffs = ["%s %s vs %s" % (k, a[p].get(k), b[p].get(k))
                         for k in sorted(set(a[p]) | set(b[p])) if a[p].get(k) != b[p].get(k)]
                problems.append("%s: %s" % (p, ", ".join(diffs)))
        for h in sorted(set(self.dut.fds) | set(self.ref.fds)):
            try:
                sa = os.fstat(self.dut.fds[h]).st_size
                sb = os.fstat(self.ref.fds[h]).st_size
            except (OSError, KeyError) as e:
                problems.append("open file #%d: %r" % (h, e))
                continue
            if sa != sb:
                problems.append("open file #%d: size %d vs %d" % (h, sa, sb))
        self.watchdog.end()
        if problems:
            self.mismatch("%s: trees differ (%s vs %s):\n    %s"
                          % (what, self.dut.name, self.ref.name, "\n    ".join(problems[:40])))
            return False
        self.passed += 1
        return True

    def remount(self, idx):
        self.dut.close_all()
        self.ref.close_all()
        # not the command itself: it may hold a token (it is in the replay hint on failure)
        print("# remount before op %d" % idx, flush=True)
        env = dict(os.environ, FSX_DIR=self.args.dir, FSX_WORK=self.dut.root)
        self.watchdog.begin("remount")
        try:
            r = subprocess.run(["sh", "-c", self.args.remount_cmd], env=env,
                               timeout=self.args.op_timeout or None)
            rc = r.returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        self.watchdog.end()
        if rc != 0:
            self.mismatch("remount command exited %s" % rc)
            return False
        self.passed += 1
        return self.check("after the remount before op %d" % idx)

    def on_hang(self):
        self.dump_log()
        print("%d passed, %d failed" % (self.passed, self.failed + 1))

    def write_log(self):
        with open(self.args.log, "w") as f:
            for op in self.log:
                f.write(json.dumps(op) + "\n")

    def dump_log(self):
        path = self.args.log
        self.write_log()
        tail = self.log[-self.args.log_tail:]
        print("--- op log (%d ops%s; all of it in %s):"
              % (len(self.log), ", the last %d shown" % len(tail) if len(tail) < len(self.log)
                 else "", path))
        start = len(self.log) - len(tail) + 1
        for i, op in enumerate(tail):
            print("#%d %s" % (start + i, json.dumps(op)))
        print("--- replay: %s --replay %s%s %s %s"
              % (sys.argv[0], path, (" --remount-cmd %s" % shq(self.args.remount_cmd))
                 if self.args.remount_cmd else "", shq(self.args.dir), shq(self.args.refdir)))


def shq(s):
    return "'" + s.replace("'", "'\\''") + "'"


def prepare(root, name):
    work = os.path.join(os.path.abspath(root), name)
    if os.path.lexists(work):
        shutil.rmtree(work)
    os.mkdir(work, 0o755)
    os.chmod(work, 0o755)
    return work


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", help="the file system under test (e.g. a xetstore mount)")
    ap.add_argument("refdir", help="a local reference directory (ext4/tmpfs)")
    ap.add_argument("--seed", type=int, default=None, help="default: from the clock (printed)")
    ap.add_argument("--ops", type=int, default=2000, help="operations (default 2000)")
    ap.add_argument("--max-size", type=int, default=4 << 20, help="max file size (4 MiB)")
    ap.add_argument("--max-files", type=int, default=32, help="max regular files (default 32)")
    ap.add_argument("--max-open", type=int, default=6, help="max files held open (default 6)")
    ap.add_argument("--check-every", type=int, default=100,
                    help="compare the whole trees every N ops (default 100; 0: only at the end)")
    ap.add_argument("--remount-cmd", help="shell command that unmounts and remounts DIR")
    ap.add_argument("--remounts", type=int, default=3, help="remount points (default 3)")
    ap.add_argument("--replay", help="run the ops of this log (JSON lines) instead of a seed")
    ap.add_argument("--log", help="write the op log here (always when given; by default it is "
                                  "written on a mismatch only, to $TMPDIR/fsx-SEED.ops.jsonl)")
    ap.add_argument("--log-tail", type=int, default=500, help="ops of the log printed (500)")
    ap.add_argument("--op-timeout", type=int, default=300,
                    help="seconds one op may take before the run fails as hung (0: no limit)")
    ap.add_argument("--keep", action="store_true", help="keep the fsx-SEED directories")
    args = ap.parse_args()
    if args.seed is None:
        args.seed = int(time.time() * 1000) % (1 << 31)
    for d in (args.dir, args.refdir):
        if not os.path.isdir(d):
            ap.error("%s is not a directory" % d)
    if os.path.realpath(args.dir) == os.path.realpath(args.refdir):
        ap.error("DIR and REFDIR must differ")
    args.log_given = args.log is not None
    if args.log is None:
        args.log = os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                "fsx-%d.ops.jsonl" % args.seed)
    os.umask(0)
    name = "fsx-%d" % args.seed
    dut = Side("DIR", prepare(args.dir, name))
    ref = Side("REFDIR", prepare(args.refdir, name))
    runner = Runner(args, dut, ref)
    print("# fsx seed %d, %s ops, max size %d, max files %d: %s vs %s"
          % (args.seed, "replayed" if args.replay else args.ops, args.max_size, args.max_files,
             dut.root, ref.root), flush=True)
    start = time.monotonic()
    ok = True
    try:
        if args.replay:
            with open(args.replay) as f:
                ops = [json.loads(line) for line in f if line.strip()]
            for op in ops:
                if op["op"] == "remount" and not args.remount_cmd:
                    continue
                if not runner.run_op(op):
                    ok = False
                    break
        else:
            rng = random.Random(args.seed)
            gen = Generator(rng, args, ref)
            remount_at = set()
            if args.remount_cmd and args.ops > 1:
                remount_at = set(random.Random(args.seed ^ 0x5EED).sample(
                    range(1, args.ops), min(args.remounts, args.ops - 1)))
            for i in range(args.ops):
                if i in remount_at:
                    if not runner.run_op({"op": "remount"}, gen):
                        ok = False
                        break
                    gen.applied({"op": "remount"}, "ok")
                if not runner.run_op(gen.next(), gen):
                    ok = False
                    break
                if args.check_every and (i + 1) % args.check_every == 0 and i + 1 < args.ops:
                    if not runner.run_op({"op": "check"}):
                        ok = False
                        break
                if (i + 1) % 1000 == 0:
                    print("# %d ops, %.0f s" % (i + 1, time.monotonic() - start), flush=True)
        if ok:
            ok = runner.run_op({"op": "check"})
    finally:
        dut.close_all()
        ref.close_all()
    if args.log_given:
        runner.write_log()
    if not ok:
        runner.dump_log()
        print("# directories kept: %s %s" % (dut.root, ref.root))
    elif not args.keep:
        shutil.rmtree(dut.root, ignore_errors=True)
        shutil.rmtree(ref.root, ignore_errors=True)
    print("# ops (errors expected by the reference): " + ", ".join(
        "%s %d%s" % (k, c[0], " (%d)" % c[1] if c[1] else "")
        for k, c in sorted(runner.kinds.items())))
    print("# ops through fds of unlinked files: %d" % runner.on_unlinked)
    print("# seed %d, %.1f s" % (args.seed, time.monotonic() - start))
    print("%d passed, %d failed" % (runner.passed, runner.failed))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
