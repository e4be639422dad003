#!/usr/bin/env python3
"""Consistency checks between two mounts of one bucket (python3 stdlib only).

  tests/mount/consistency.py --ttl SECONDS DIR_A DIR_B
  tests/mount/consistency.py --list

DIR_A and DIR_B are two mounts of the same bucket (two `xetstore mount` processes, usually
with a metadata TTL of --ttl seconds). The checks make a work directory consistency-<id>/ in
A and then, for each change made through one mount, poll the other until it shows the change
whole, for at most TTL + --slack seconds (default 2). Every observation while polling must be
a whole version (the state before or the state after, compared by SHA-256): a torn file, a
mix of two writers, or a version that never existed is a failure even before the deadline.

  new_file_visible          files of several sizes written and closed in A are whole in B
  reverse_direction         a file written in B is whole in A
  many_files_visible        50 small files written in A are all whole in B
  overwrite_visible         an overwrite (O_TRUNC) in A: B shows old or new, then new
  append_visible            an append in A: B shows old or new, then new
  open_fd_pins_version      an fd B opened before A's overwrite reads one version whole
  delete_visible            unlink in A: B shows the file whole or absent, then absent
  rename_visible            rename in A: B sees the new name whole and the old one gone
  mkdir_visible             a directory (with a file) made in A is listed in B
  rmdir_visible             an rmdir in A is gone in B
  chmod_visible             a chmod in A is seen in B
  symlink_visible           a symlink made in A reads back in B
  two_writers_same_size     A and B write the same path at once (equal sizes): both mounts
                            end with one writer's version whole, the same one
  two_writers_other_sizes   the same with different sizes
  two_writers_interleaved   writes of A and B alternate in chunks before both close

open_fd_pins_version, two_writers_other_sizes and two_writers_interleaved are skipped (with the
reason) when DIR_A and DIR_B are one file system seen twice (same st_dev and inode): there the
two sides share one inode, and POSIX lets overlapping writers mix.

Output: one line per check (`ok NAME (detail)`, `FAIL NAME: ...`, `skip NAME: reason`), then
`N passed, N failed[, N skipped]`; exit 1 on any failure. The helpers (observe, wait_whole,
write_file, ...) can be imported by other tests.

Local validation: pass one local directory twice (`--ttl 0 D D`): the other checks apply and
must pass. Two unrelated directories must fail.
"""

import argparse
import errno
import hashlib
import os
import random
import shutil
import stat
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fs_watchdog import Watchdog  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Helpers (importable).


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def content(seed, size):
    """Deterministic bytes whose every 64 KiB block differs (so a mix is visible)."""
    r = random.Random(seed)
    return r.randbytes(size)


def write_file(path, data, fsync=True, mode=0o644):
    """open(O_CREAT|O_TRUNC|O_WRONLY), one or more writes, fsync, close."""
    fd = os.open(path, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)


def read_whole(path):
    """The file's bytes, or None when it does not exist. Other errors raise."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def observe(path, follow=False):
    """("absent",) / ("file", sha256, size) / ("error", errno name) / ("other", type).
    follow: stat through a symlink (else a symlink is "other").
    A file whose size (fstat before and after the read) disagrees with the bytes read is
    ("torn", size, bytes read): metadata of one version with content of another."""
    try:
        st = os.stat(path) if follow else os.lstat(path)
        if not stat.S_ISREG(st.st_mode):
            return ("other", stat.S_IFMT(st.st_mode))
        with open(path, "rb") as f:
            before = os.fstat(f.fileno()).st_size
            data = f.read()
            after = os.fstat(f.fileno()).st_size
        if before == after and before != len(data):
            return ("torn", before, len(data))
        return ("file", sha256(data), len(data))
    except FileNotFoundError:
        return ("absent",)
    except OSError as e:
        return ("error", errno.errorcode.get(e.errno, str(e.errno)))


def show(obs):
    if obs and isinstance(obs[0], tuple):  # a pair: (A's observation, B's)
        return "A: %s / B: %s" % (show(obs[0]), show(obs[1]))
    if obs[0] == "file":
        return "%d bytes sha256 %s" % (obs[2], obs[1][:12])
    return " ".join(str(x) for x in obs)


class Waiter:
    """Polls observations until `done(obs)` or a deadline; every observation must be allowed."""

    def __init__(self, interval=0.05):
        self.interval = interval

    def wait(self, observe_fn, done, allowed, deadline):
        """Returns (ok, elapsed seconds, message). ok is False on a disallowed observation or
        on the deadline."""
        start = time.monotonic()
        last = None
        while True:
            obs = observe_fn()
            if not allowed(obs):
                return False, time.monotonic() - start, "saw %s, which is neither the state " \
                    "before nor after" % (show(obs) if isinstance(obs, tuple) else repr(obs))
            if done(obs):
                return True, time.monotonic() - start, ""
            last = obs
            if time.monotonic() > deadline:
                return False, time.monotonic() - start, "still %s at the deadline" % (
                    show(last) if isinstance(last, tuple) else repr(last))
            time.sleep(self.interval)


def wait_whole(path, want_sha, deadline, before=("absent",), waiter=None, follow=False):
    """Waits until `path` holds want_sha; the only other state allowed is `before` (an
    observation tuple or a set of sha256 strings)."""
    before_shas = set()
    before_absent = False
    for b in (before if isinstance(before, (set, list)) else [before]):
        if isinstance(b, tuple):
            if b[0] == "absent":
                before_absent = True
            elif b[0] == "file":
                before_shas.add(b[1])
        else:
            before_shas.add(b)

    def allowed(obs):
        return (obs[0] == "absent" and before_absent) or (
            obs[0] == "file" and (obs[1] == want_sha or obs[1] in before_shas))

    return (waiter or Waiter()).wait(lambda: observe(path, follow), lambda o: o[0] == "file" and
                                     o[1] == want_sha, allowed, deadline)


NO_SKIP = False  # --no-skip: run the one-file-system checks anyway (to test this checker)


def same_fs(a, b):
    if NO_SKIP:
        return False
    sa, sb = os.stat(a), os.stat(b)
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


# ---------------------------------------------------------------------------------------------
# Checks.


class Skip(Exception):
    pass


class Ctx:
    def __init__(self, args, a_root, b_root, name):
        self.args = args
        self.a = a_root
        self.b = b_root
        self.name = name
        self.rng = random.Random(args.seed)
        self.notes = []
        self.failures = []

    def deadline(self):
        return time.monotonic() + self.args.ttl + self.args.slack

    def pa(self, *parts):
        return os.path.join(self.a, *parts)

    def pb(self, *parts):
        return os.path.join(self.b, *parts)

    def fail(self, msg):
        self.failures.append(msg)

    def note(self, msg):
        self.notes.append(msg)

    def expect(self, result, what):
        ok, elapsed, msg = result
        if ok:
            self.note("%s %.2fs" % (what, elapsed))
        else:
            self.fail("%s: %s (after %.2f s, TTL %.1f + slack %.1f)"
                      % (what, msg, elapsed, self.args.ttl, self.args.slack))
        return ok

    def settle(self, path_b, sha):
        """Waits (bounded) until B shows sha at path_b: the starting state of a check."""
        ok, _, msg = wait_whole(path_b, sha, self.deadline(), before=[("absent",)])
        if not ok:
            self.fail("setup: B never showed the initial version: " + msg)
        return ok


CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


@check
def new_file_visible(c):
    files = []
    for size in c.args.sizes:
        name = "new-%d" % size
        data = content(c.rng.getrandbits(32), size)
        write_file(c.pa(name), data)
        files.append((name, sha256(data), time.monotonic() + c.args.ttl + c.args.slack))
    for name, sha, deadline in files:
        c.expect(wait_whole(c.pb(name), sha, deadline), "%s whole in B" % name)


@check
def reverse_direction(c):
    data = content(c.rng.getrandbits(32), 300_000)
    write_file(c.pb("from-b"), data)
    c.expect(wait_whole(c.pa("from-b"), sha256(data), c.deadline()), "from-b whole in A")


@check
def many_files_visible(c):
    os.mkdir(c.pa("many"))
    want = {}
    for i in range(50):
        data = content(c.rng.getrandbits(32), c.rng.randint(0, 20000))
        write_file(c.pa("many", "f%02d" % i), data, fsync=False)
        want["f%02d" % i] = sha256(data)
    deadline = c.deadline()
    for name, sha in sorted(want.items()):
        if not c.expect(wait_whole(c.pb("many", name), sha, deadline), "many/%s" % name):
            break
    c.notes = ["50 files"] + c.notes[-1:]


@check
def overwrite_visible(c):
    old = content(c.rng.getrandbits(32), 2_000_000)
    write_file(c.pa("ow"), old)
    if not c.settle(c.pb("ow"), sha256(old)):
        return
    new = content(c.rng.getrandbits(32), 1_500_000)
    write_file(c.pa("ow"), new)
    c.expect(wait_whole(c.pb("ow"), sha256(new), c.deadline(), before=sha256(old)),
             "overwrite in B")
    c.expect(wait_whole(c.pa("ow"), sha256(new), c.deadline(), before=sha256(old)),
             "overwrite in A")


@check
def append_visible(c):
    old = content(c.rng.getrandbits(32), 100_000)
    write_file(c.pa("app"), old)
    if not c.settle(c.pb("app"), sha256(old)):
        return
    extra = content(c.rng.getrandbits(32), 50_000)
    fd = os.open(c.pa("app"), os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, extra)
    finally:
        os.close(fd)
    c.expect(wait_whole(c.pb("app"), sha256(old + extra), c.deadline(), before=sha256(old)),
             "append in B")


@check
def open_fd_pins_version(c):
    if same_fs(c.a, c.b):
        raise Skip("DIR_A and DIR_B are one file system seen twice: an fd there reads the one "
                   "inode A rewrites")
    old = content(c.rng.getrandbits(32), 3_000_000)
    write_file(c.pa("pin"), old)
    if not c.settle(c.pb("pin"), sha256(old)):
        return
    new = content(c.rng.getrandbits(32), 3_000_000)
    fd = os.open(c.pb("pin"), os.O_RDONLY)
    try:
        head = os.pread(fd, 1_000_000, 0)
        write_file(c.pa("pin"), new)
        # let B learn about the new version, then read the rest through the old fd
        time.sleep(c.args.ttl + c.args.slack)
        rest = b""
        while True:
            b = os.pread(fd, 1 << 20, len(head) + len(rest))
            if not b:
                break
            rest += b
    finally:
        os.close(fd)
    got = sha256(head + rest)
    if got == sha256(old):
        c.note("the fd kept the old version")
    elif got == sha256(new):
        c.note("the fd switched to the new version whole")
    else:
        c.fail("reading one fd across an overwrite gave %d bytes that are neither version "
               "(a mix of old and new)" % len(head + rest))


@check
def delete_visible(c):
    data = content(c.rng.getrandbits(32), 50_000)
    write_file(c.pa("del"), data)
    if not c.settle(c.pb("del"), sha256(data)):
        return
    os.unlink(c.pa("del"))
    sha = sha256(data)
    c.expect(Waiter().wait(lambda: observe(c.pb("del")), lambda o: o[0] == "absent",
                           lambda o: o[0] == "absent" or (o[0] == "file" and o[1] == sha),
                           c.deadline()), "unlink seen in B")


@check
def rename_visible(c):
    data = content(c.rng.getrandbits(32), 70_000)
    write_file(c.pa("ren-src"), data)
    if not c.settle(c.pb("ren-src"), sha256(data)):
        return
    os.rename(c.pa("ren-src"), c.pa("ren-dst"))
    deadline = c.deadline()
    c.expect(wait_whole(c.pb("ren-dst"), sha256(data), deadline), "new name whole in B")
    sha = sha256(data)
    c.expect(Waiter().wait(lambda: observe(c.pb("ren-src")), lambda o: o[0] == "absent",
                           lambda o: o[0] == "absent" or (o[0] == "file" and o[1] == sha),
                           deadline), "old name gone in B")


@check
def mkdir_visible(c):
    os.mkdir(c.pa("newdir"))
    os.mkdir(c.pa("newdir", "empty"))
    write_file(c.pa("newdir", "inside"), b"inside")
    deadline = c.deadline()
    c.expect(wait_whole(c.pb("newdir", "inside"), sha256(b"inside"), deadline), "file in new dir")
    c.expect(Waiter().wait(lambda: os.path.isdir(c.pb("newdir", "empty")), lambda o: o,
                           lambda o: True, deadline), "empty dir in B")
    listing = sorted(os.listdir(c.pb("newdir"))) if os.path.isdir(c.pb("newdir")) else None
    if listing != ["empty", "inside"]:
        c.fail("listing of newdir in B: expected ['empty', 'inside'], got %r" % (listing,))


@check
def rmdir_visible(c):
    os.mkdir(c.pa("gone"))
    deadline = c.deadline()
    if not c.expect(Waiter().wait(lambda: os.path.isdir(c.pb("gone")), lambda o: o,
                                  lambda o: True, deadline), "dir appears in B"):
        return
    os.rmdir(c.pa("gone"))
    c.expect(Waiter().wait(lambda: os.path.lexists(c.pb("gone")), lambda o: not o,
                           lambda o: True, c.deadline()), "rmdir seen in B")


@check
def chmod_visible(c):
    write_file(c.pa("mode"), b"m", mode=0o644)
    os.chmod(c.pa("mode"), 0o644)
    if not c.settle(c.pb("mode"), sha256(b"m")):
        return
    os.chmod(c.pa("mode"), 0o751)

    def mode():
        try:
            return stat.S_IMODE(os.stat(c.pb("mode")).st_mode)
        except OSError:
            return None

    c.expect(Waiter().wait(mode, lambda m: m == 0o751, lambda m: m in (0o644, 0o751),
                           c.deadline()), "mode 0751 in B")


@check
def symlink_visible(c):
    write_file(c.pa("sl-target"), b"target")
    os.symlink("sl-target", c.pa("sl"))

    def target():
        try:
            return os.readlink(c.pb("sl"))
        except OSError:
            return None

    if c.expect(Waiter().wait(target, lambda t: t == "sl-target", lambda t: t in (None,
                                                                                  "sl-target"),
                              c.deadline()), "symlink in B"):
        c.expect(wait_whole(c.pb("sl"), sha256(b"target"), c.deadline(), follow=True),
                 "read through it")


def two_writers(c, name, size_a, size_b, interleave):
    da = content(c.rng.getrandbits(32), size_a)
    db = content(c.rng.getrandbits(32), size_b)
    versions = {sha256(da): "A's", sha256(db): "B's"}
    path_a, path_b = c.pa(name), c.pb(name)
    barrier = threading.Barrier(2)
    errors = []

    def writer(path, data, first):
        try:
            fd = os.open(path, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o644)
            try:
                barrier.wait(10)
                if interleave:
                    step = max(1, len(data) // 8)
                    for i in range(0, len(data), step):
                        os.pwrite(fd, data[i:i + step], i)
                        time.sleep(0.01 if first else 0.013)
                else:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view):]
                barrier.wait(10)
            finally:
                os.close(fd)
        except (OSError, threading.BrokenBarrierError) as e:
            errors.append("%s: %r" % (path, e))

    ta = threading.Thread(target=writer, args=(path_a, da, True))
    tb = threading.Thread(target=writer, args=(path_b, db, False))
    ta.start()
    tb.start()
    ta.join()
    tb.join()
    if errors:
        c.fail("writers failed: " + "; ".join(errors))
        return
    deadline = c.deadline()
    allowed = set(versions)

    def both():
        return (observe(path_a), observe(path_b))

    def ok_pair(p):
        return all(o[0] == "absent" or (o[0] == "file" and o[1] in allowed) for o in p)

    def converged(p):
        return p[0][0] == "file" and p[0] == p[1]

    ok, elapsed, msg = Waiter().wait(both, converged, ok_pair, deadline)
    if not ok:
        c.fail("two writers: %s (after %.2f s); A wrote %s, B wrote %s"
               % (msg if "neither" in msg else "the mounts did not agree on one version: "
                  + show(both()), elapsed, show(("file", sha256(da), len(da))),
                  show(("file", sha256(db), len(db)))))
        return
    c.note("both show %s version whole after %.2f s" % (versions[observe(path_a)[1]], elapsed))


@check
def two_writers_same_size(c):
    for r in range(c.args.rounds):
        two_writers(c, "tw-same-%d" % r, 1_000_000, 1_000_000, False)
        if c.failures:
            break
    c.notes = c.notes[-1:]


@check
def two_writers_other_sizes(c):
    if same_fs(c.a, c.b):
        raise Skip("DIR_A and DIR_B are one file system seen twice: overlapping writers of "
                   "different sizes merge there; the whole-file property needs two mounts")
    for r in range(c.args.rounds):
        two_writers(c, "tw-size-%d" % r, 2_500_000 if r % 2 else 300_000,
                    300_000 if r % 2 else 2_500_000, False)
        if c.failures:
            break
    c.notes = c.notes[-1:]


@check
def two_writers_interleaved(c):
    if same_fs(c.a, c.b):
        raise Skip("DIR_A and DIR_B are one file system seen twice: interleaved writes to one "
                   "inode mix there by design")
    for r in range(c.args.rounds):
        two_writers(c, "tw-inter-%d" % r, 800_000, 800_000, True)
        if c.failures:
            break
    c.notes = c.notes[-1:]


# ---------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir_a", nargs="?")
    ap.add_argument("dir_b", nargs="?")
    ap.add_argument("--ttl", type=float, help="the mounts' metadata TTL in seconds (required)")
    ap.add_argument("--slack", type=float, default=2.0,
                    help="seconds allowed past the TTL (default 2)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of each two-writer check (3)")
    ap.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")],
                    default=[0, 1, 4095, 65536, (1 << 20) + 3, 9 << 20],
                    help="comma-separated sizes for new_file_visible")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-k", dest="pattern", action="append", help="only checks whose name has it")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--no-skip", action="store_true",
                    help="run the checks skipped on one file system seen twice anyway (there "
                         "they must fail: a way to see that they can)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--check-timeout", type=int, default=0,
                    help="seconds one check may take before the run stops as hung (default "
                         "120 + 20 x (TTL + slack); 0 means that default)")
    args = ap.parse_args()
    checks = [f for f in CHECKS if not args.pattern or any(p in f.__name__ for p in args.pattern)]
    if args.list:
        for f in checks:
            print(f.__name__)
        return 0
    if not args.dir_a or not args.dir_b or args.ttl is None:
        ap.error("DIR_A, DIR_B and --ttl are required")
    for d in (args.dir_a, args.dir_b):
        if not os.path.isdir(d):
            ap.error("%s is not a directory" % d)
    global NO_SKIP
    NO_SKIP = args.no_skip
    os.umask(0o022)
    name = "consistency-%d-%d" % (os.getpid(), int(time.time()))
    a_root = os.path.join(os.path.abspath(args.dir_a), name)
    b_root = os.path.join(os.path.abspath(args.dir_b), name)
    print("# consistency: A=%s B=%s TTL %.1f s + slack %.1f s" % (a_root, b_root, args.ttl,
                                                                  args.slack), flush=True)
    passed = failed = skipped = 0

    def closing():
        return "%d passed, %d failed%s" % (passed, failed + 1,
                                          ", %d skipped" % skipped if skipped else "")

    watchdog = Watchdog(args.check_timeout or int(120 + 20 * (args.ttl + args.slack)),
                        lambda: print(closing(), flush=True))
    watchdog.begin("work_dir_visible")
    os.mkdir(a_root)
    try:
        ok, elapsed, msg = Waiter().wait(lambda: os.path.isdir(b_root), lambda o: o,
                                         lambda o: True,
                                         time.monotonic() + args.ttl + args.slack)
        if ok:
            passed += 1
            print("ok work_dir_visible (%.2fs)" % elapsed, flush=True)
        else:
            failed += 1
            print("FAIL work_dir_visible: %s does not appear in B within TTL + slack" % name)
            checks = []
        for i, fn in enumerate(checks):
            watchdog.begin(fn.__name__)
            sub = "c%02d-%s" % (i, fn.__name__)
            os.mkdir(os.path.join(a_root, sub))
            c = Ctx(args, os.path.join(a_root, sub), os.path.join(b_root, sub), fn.__name__)
            c.rng = random.Random("%d-%s" % (args.seed, fn.__name__))
            if not Waiter().wait(lambda: os.path.isdir(c.b), lambda o: o, lambda o: True,
                                 c.deadline())[0]:
                failed += 1
                print("FAIL %s: its directory does not appear in B" % fn.__name__, flush=True)
                continue
            try:
                fn(c)
            except Skip as e:
                skipped += 1
                print("skip %s: %s" % (fn.__name__, e), flush=True)
                continue
            except OSError as e:
                c.fail("unexpected %s on %s" % (errno.errorcode.get(e.errno, e.errno),
                                                e.filename))
            if c.failures:
                failed += 1
                print("FAIL %s: %s" % (fn.__name__, c.failures[0]), flush=True)
                for f in c.failures[1:5]:
                    print("    also: " + f)
            else:
                passed += 1
                detail = ", ".join(c.notes[:4]) + (", ..." if len(c.notes) > 4 else "")
                print("ok %s%s" % (fn.__name__, " (%s)" % detail if detail else ""), flush=True)
    finally:
        watchdog.end()
        if not args.keep:
            shutil.rmtree(a_root, ignore_errors=True)
    print("%d passed, %d failed%s" % (passed, failed, ", %d skipped" % skipped if skipped else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
