"""`xetstore mount` as a test subject (python3 stdlib): one mount process with its log, the
ways to end it (clean unmount, kill -9 with the FUSE connection aborted), and the checks
that look at the bucket from outside the mount (tests/mount/run uses it).
"""

import os
import signal
import subprocess
import time


def fuse_connection(mountpoint):
    """The fusectl connection number (the device minor) of the FUSE mount at `mountpoint`."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            if len(fields) > 4 and fields[4] == mountpoint:
                return fields[2].split(":")[1]
    return None


def ensure_fusectl():
    if not os.path.isdir("/sys/fs/fuse/connections") or not os.listdir("/sys/fs/fuse/connections"):
        subprocess.run(["mount", "-t", "fusectl", "none", "/sys/fs/fuse/connections"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class MountProcess:
    """`xetstore mount SOURCE MOUNTPOINT` in the foreground of a child process."""

    def __init__(self, binary, source, mountpoint, endpoint, token, cache_dir, log_path,
                 ttl_ms=500, extra_args=()):
        self.binary = binary
        self.source = source
        self.mountpoint = os.path.realpath(mountpoint)
        self.env = dict(os.environ)
        self.env.update({"XETSTORE_ENDPOINT": endpoint, "XETSTORE_TOKEN": token})
        self.cache_dir = cache_dir
        self.log_path = log_path
        self.ttl_ms = ttl_ms
        self.extra_args = list(extra_args)
        self.proc = None

    def start(self, timeout=30.0):
        os.makedirs(self.mountpoint, exist_ok=True)
        log = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen(
                [self.binary, "mount", self.source, self.mountpoint, "--cache-dir",
                 self.cache_dir, "--metadata-ttl-ms", str(self.ttl_ms), "--allow-other"]
                + self.extra_args,
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=self.env)
        finally:
            log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("xetstore mount exited with %d:\n%s"
                                   % (self.proc.returncode, self.log_tail()))
            if fuse_connection(self.mountpoint) is not None:
                return
            time.sleep(0.02)
        raise RuntimeError("xetstore mount did not mount within %.0f s" % timeout)

    def unmount(self, timeout=120.0):
        """`xetstore unmount` (commits what is pending), then waits for the process; returns
        (unmount exit code, mount process exit code)."""
        rc = subprocess.run([self.binary, "unmount", self.mountpoint], env=self.env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).returncode
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill9()
            code = None
        return rc, code

    def kill9(self):
        """SIGKILL the mount, abort its FUSE connection and detach the mount point."""
        conn = fuse_connection(self.mountpoint)
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        if conn is not None:
            ensure_fusectl()
            try:
                with open("/sys/fs/fuse/connections/%s/abort" % conn, "w") as f:
                    f.write("1")
            except OSError:
                pass
        subprocess.run(["umount", "-l", self.mountpoint], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        if self.proc:
            self.proc.wait()

    def log_tail(self, lines=20):
        try:
            with open(self.log_path, "rb") as f:
                return b"".join(f.read().splitlines(keepends=True)[-lines:]).decode(
                    "utf-8", "replace")
        except OSError:
            return ""

    def rss_kib(self, field="VmHWM"):
        try:
            with open("/proc/%d/status" % self.proc.pid) as f:
                for line in f:
                    if line.startswith(field + ":"):
                        return int(line.split()[1])
        except (OSError, AttributeError):
            return None
        return None
