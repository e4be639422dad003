"""Shared by tests/hardening/crash-consistency and tests/hardening/load-test (python3 stdlib).

What it offers, each piece with one job:
  ServerProcess   one `xetstore serve` on a loopback port over a data directory: start (waits
                  for the printed URL and /healthz 200), kill -9, stop (SIGTERM), peak RSS,
                  and the lines of its log that are not clean (anything but the startup lines
                  and access-log lines of status < 500)
  Http            requests to that server over http.client (loopback only)
  Cli             the xetstore client commands, with endpoint and token set
  ContentFactory  random files that share blocks with each other (so uploads deduplicate),
                  with their SHA-256 computed here and their Xet hash from `xetstore hash`
  metrics         parse /metrics text; per-route quantiles from the latency histograms
"""

import hashlib
import http.client
import json
import os
import random
import re
import signal
import socket
import subprocess
import time
import urllib.parse

LOOPBACK = "127.0.0.1"


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago (kept fixed across restarts)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class Http:
    """Plain HTTP/1.1 requests to one loopback server; a new connection per request."""

    def __init__(self, port, timeout=30.0):
        self.port = port
        self.timeout = timeout

    def request(self, method, path, token=None, body=None, headers=None):
        """Returns (status, headers dict with lower-case names, body bytes).
        Raises OSError / http.client.HTTPException when the server is unreachable."""
        conn = http.client.HTTPConnection(LOOPBACK, self.port, timeout=self.timeout)
        try:
            h = dict(headers or {})
            if token:
                h["Authorization"] = "Bearer " + token
            conn.request(method, path, body=body, headers=h)
            resp = conn.getresponse()
            data = resp.read()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data
        finally:
            conn.close()

    def healthz(self):
        try:
            return self.request("GET", "/healthz")[0]
        except (OSError, http.client.HTTPException):
            return None

    def tree(self, token, bucket, prefix=""):
        """Every file of `bucket` below `prefix`, recursively: {path: (size, xetHash)}.
        Follows the Link rel="next" pages. Raises RuntimeError on a non-200 answer."""
        path = "/api/buckets/%s/tree%s?recursive=true&limit=10000" % (
            bucket,
            "/" + urllib.parse.quote(prefix, safe="/") if prefix else "",
        )
        out = {}
        for _ in range(100000):
            status, headers, body = self.request("GET", path, token)
            if status != 200:
                raise RuntimeError("tree %s: HTTP %d %s" % (path, status, body[:200]))
            for item in json.loads(body):
                if item.get("type") == "file":
                    out[item["path"]] = (item["size"], item["xetHash"])
            m = re.search(r'<([^>]*)>;\s*rel="next"', headers.get("link", ""))
            if not m:
                return out
            u = urllib.parse.urlsplit(m.group(1))
            path = u.path + ("?" + u.query if u.query else "")
        raise RuntimeError("tree: too many pages")

    def batch(self, token, bucket, operations):
        """POSTs the NDJSON batch; returns (status, parsed JSON answer or None)."""
        body = "".join(json.dumps(op) + "\n" for op in operations).encode()
        status, _, data = self.request(
            "POST",
            "/api/buckets/%s/batch" % bucket,
            token,
            body,
            {"Content-Type": "application/x-ndjson"},
        )
        try:
            return status, json.loads(data)
        except ValueError:
            return status, None

    def metrics(self):
        status, _, body = self.request("GET", "/metrics")
        if status != 200:
            raise RuntimeError("/metrics: HTTP %d" % status)
        return body.decode()


class ServerProcess:
    """`xetstore serve --listen 127.0.0.1:PORT --data-dir DIR`, stderr appended to `log_path`."""

    SERVING = re.compile(r"^xetstore serving on (http://\S+) ")
    STARTUP = (
        re.compile(r"^Created the admin token "),
        re.compile(r"^  hf_[0-9a-f]{40}$"),
        SERVING,
        re.compile(r"^xetstore: cached \d+ xorb tables, \d+ file records and \d+ whole-file "
                   r"plans \([0-9.]+ MiB\) in \d+ ms$"),
        re.compile(r"^xetstore: received signal \d+, finishing in-flight requests$"),
        re.compile(r"^xetstore: read-only: every write is answered 503$"),
        re.compile(r"^xetstore: object cache \S+: [0-9.]+ [KMGT]?i?B in \d+ objects "
                   r"\(of [0-9.]+ [KMGT]?i?B\)$"),
    )

    def __init__(self, binary, data_dir, port, log_path, extra_args=()):
        self.binary = binary
        self.data_dir = data_dir
        self.port = port
        self.log_path = log_path
        self.extra_args = list(extra_args)
        self.proc = None
        self.preexec_fn = None  # run in the child before exec (e.g. PR_SET_PDEATHSIG)
        self.log_offset = 0  # where the current run's lines begin in the log
        self.checked_offset = 0  # how far log_problems() has looked
        self.http = Http(port)

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def start(self, timeout=30.0):
        """Starts the server and waits until /healthz answers 200. Raises RuntimeError if it
        exits or does not answer within `timeout` seconds."""
        log = open(self.log_path, "ab")
        if log.tell() > 0:  # a run killed mid-line must not glue its tail to our first line
            with open(self.log_path, "rb") as f:
                f.seek(-1, os.SEEK_END)
                if f.read(1) != b"\n":
                    log.write(b"\n")
                    log.flush()
        self.log_offset = self.checked_offset = log.tell()
        try:
            self.proc = subprocess.Popen(
                [self.binary, "serve", "--listen", "%s:%d" % (LOOPBACK, self.port),
                 "--data-dir", self.data_dir] + self.extra_args,
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, preexec_fn=self.preexec_fn,
            )
        finally:
            log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("xetstore serve exited with %d at start:\n%s"
                                   % (self.proc.returncode, "".join(self.run_log()[-20:])))
            if any(self.SERVING.match(l) for l in self.run_log()) and self.http.healthz() == 200:
                return
            time.sleep(0.02)
        raise RuntimeError("xetstore serve did not answer /healthz 200 within %.0f s" % timeout)

    def kill9(self):
        """SIGKILL, then reap."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        if self.proc:
            self.proc.wait()

    def stop(self, timeout=40.0):
        """SIGTERM and wait (the server drains in-flight requests); returns its exit code."""
        if not self.proc:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def run_log(self):
        """The log lines of the current run."""
        with open(self.log_path, "rb") as f:
            f.seek(self.log_offset)
            return f.read().decode("utf-8", "replace").splitlines(keepends=True)

    def log_problems(self):
        """Complete lines of the current run not looked at by an earlier call that are neither
        startup lines nor access-log lines with a status below 500."""
        with open(self.log_path, "rb") as f:
            f.seek(self.checked_offset)
            data = f.read()
        complete = data[: data.rfind(b"\n") + 1]
        self.checked_offset += len(complete)
        bad = []
        for line in complete.decode("utf-8", "replace").splitlines():
            text = line
            if any(p.match(text) for p in self.STARTUP):
                continue
            if text.startswith("{"):
                try:
                    entry = json.loads(text)
                    if isinstance(entry.get("status"), int) and entry["status"] < 500:
                        continue
                except ValueError:
                    pass
            bad.append(text)
        return bad

    def peak_rss_kib(self):
        """VmHWM of the running server, in KiB (None if it is not running)."""
        try:
            with open("/proc/%d/status" % self.proc.pid) as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1])
        except (OSError, AttributeError):
            return None
        return None


class Cli:
    """Runs `xetstore` client commands against one endpoint with one token."""

    def __init__(self, binary, endpoint, token, cache_dir, retries=5):
        self.binary = binary
        self.env = dict(os.environ)
        self.env.update({"XETSTORE_ENDPOINT": endpoint, "XETSTORE_TOKEN": token,
                         "XETSTORE_CACHE_DIR": cache_dir})
        for k in ("HF_ENDPOINT", "HF_TOKEN"):
            self.env.pop(k, None)
        self.retries = retries
        self.preexec_fn = None  # run in each child before exec (e.g. PR_SET_PDEATHSIG)

    def argv(self, *args):
        return [self.binary] + list(args) + ["--retries", str(self.retries)]

    def run(self, *args, timeout=120.0):
        """Returns (exit code, stdout, stderr); a command that outlives `timeout` is killed
        and reported as exit code None."""
        p = subprocess.Popen(self.argv(*args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=self.env, preexec_fn=self.preexec_fn)
        try:
            out, err = p.communicate(timeout=timeout)
            return p.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            return None, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")

    def spawn(self, *args):
        """Starts a command in the background (for kill -9); output discarded."""
        return subprocess.Popen(self.argv(*args), stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self.env,
                                preexec_fn=self.preexec_fn)


class LocalFile:
    """A generated local file: where it is, its size, SHA-256 and Xet hash."""

    def __init__(self, path, size, sha256, xet_hash=None):
        self.path = path
        self.size = size
        self.sha256 = sha256
        self.xet_hash = xet_hash

    def key(self):
        """What a listing shows of it."""
        return (self.size, self.xet_hash)


class ContentFactory:
    """Random files made of fresh random runs and copies of a few shared blocks, so files
    share chunks with each other (the content-defined chunker realigns after a shared run).
    Thread-safe as long as each thread passes its own `rng`."""

    def __init__(self, binary, directory, seed, shared_blocks=12):
        self.binary = binary
        self.directory = directory
        os.makedirs(directory, exist_ok=True)
        rng = random.Random(seed)
        self.shared = [rng.randbytes(rng.randint(96 << 10, 512 << 10)) for _ in range(shared_blocks)]
        self.by_xet = {}  # xet hash -> LocalFile, for every file hashed (its SHA-256 stays known)

    @staticmethod
    def pick_size(rng, max_bytes):
        """Sizes from 0 bytes to `max_bytes`, most of them small."""
        r = rng.random()
        if r < 0.05:
            return rng.randint(0, 16)
        if r < 0.40:
            return rng.randint(17, 64 << 10)
        if r < 0.80:
            return rng.randint(64 << 10, min(1 << 20, max_bytes))
        return rng.randint(min(1 << 20, max_bytes), max_bytes)

    def make(self, name, rng, max_bytes=4 << 20):
        """Writes a new file `name` in the factory's directory (a size from pick_size; about
        half of the files larger than 128 KiB contain shared blocks)."""
        size = self.pick_size(rng, max_bytes)
        parts, left = [], size
        share = size > (128 << 10) and rng.random() < 0.5
        while left > 0:
            if share and rng.random() < 0.5:
                block = rng.choice(self.shared)
                piece = block[: min(left, len(block))]
            else:
                piece = rng.randbytes(min(left, rng.randint(32 << 10, 1 << 20)))
            parts.append(piece)
            left -= len(piece)
        data = b"".join(parts)
        path = os.path.join(self.directory, name)
        with open(path, "wb") as f:
            f.write(data)
        return LocalFile(path, len(data), hashlib.sha256(data).hexdigest())

    def add_xet_hashes(self, files):
        """Fills in xet_hash of each LocalFile with one `xetstore hash --json` run."""
        if not files:
            return
        out = subprocess.run([self.binary, "hash", "--json"] + [f.path for f in files],
                             check=True, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL).stdout
        lines = [json.loads(l) for l in out.decode().splitlines() if l.strip()]
        if len(lines) != len(files):
            raise RuntimeError("xetstore hash printed %d lines for %d files" % (len(lines), len(files)))
        for f, j in zip(files, lines):
            if j["size"] != f.size or j["sha256"] != f.sha256:
                raise RuntimeError("xetstore hash disagrees with hashlib on %s" % f.path)
            f.xet_hash = j["xet_hash"]
            self.by_xet[f.xet_hash] = f

    def source_sha256(self, xet_hash):
        """SHA-256 of the local file that had this Xet hash (None if none did)."""
        f = self.by_xet.get(xet_hash)
        return f.sha256 if f else None


class FilePool:
    """New files for one thread: made `batch` at a time, hashed with one `xetstore hash`."""

    def __init__(self, factory, prefix, rng, max_bytes=4 << 20, batch=8):
        self.factory = factory
        self.prefix = prefix
        self.rng = rng
        self.max_bytes = max_bytes
        self.batch = batch
        self.made = 0
        self.ready = []

    def next(self):
        """A new LocalFile with its Xet hash; the caller deletes its path when done."""
        if not self.ready:
            fresh = []
            for _ in range(self.batch):
                self.made += 1
                fresh.append(self.factory.make("%s-%d" % (self.prefix, self.made), self.rng,
                                               self.max_bytes))
            self.factory.add_xet_hashes(fresh)
            self.ready = fresh
        return self.ready.pop()


def write_random_file(path, size, seed):
    """`size` random bytes (deterministic in `seed`) written to `path`; returns LocalFile."""
    rng = random.Random(seed)
    h = hashlib.sha256()
    with open(path, "wb") as f:
        left = size
        while left > 0:
            piece = rng.randbytes(min(left, 4 << 20))
            h.update(piece)
            f.write(piece)
            left -= len(piece)
    return LocalFile(path, size, h.hexdigest())


# --- /metrics ---------------------------------------------------------------------------

_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_metrics(text):
    """Prometheus text -> list of (name, {label: value}, float value)."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        if not m:
            continue
        labels = dict(_LABEL.findall(m.group(2) or ""))
        out.append((m.group(1), labels, float(m.group(3))))
    return out


def metric_sum(samples, name, **want):
    """Sum of the samples called `name` whose labels include `want`."""
    return sum(v for n, l, v in samples
               if n == name and all(l.get(k) == x for k, x in want.items()))


def route_latency_quantiles(samples, qs=(0.5, 0.99),
                            family="xetstore_http_request_duration_seconds"):
    """{route: (count, [quantile seconds for each q])} from the cumulative histogram buckets
    (all status classes merged), interpolating linearly inside a bucket as Prometheus'
    histogram_quantile does; a quantile in the +Inf bucket is reported as the last bound."""
    per_route = {}
    for n, l, v in samples:
        if n == family + "_bucket":
            b = per_route.setdefault(l["route"], {})
            le = float("inf") if l["le"] == "+Inf" else float(l["le"])
            b[le] = b.get(le, 0.0) + v
    result = {}
    for route, buckets in per_route.items():
        bounds = sorted(buckets)
        total = buckets[float("inf")] if float("inf") in buckets else 0.0
        if total <= 0:
            continue
        values = []
        for q in qs:
            rank = q * total
            prev_bound, prev_count = 0.0, 0.0
            for bound in bounds:
                count = buckets[bound]
                if count >= rank:
                    if bound == float("inf"):
                        values.append(prev_bound)
                    elif count == prev_count:
                        values.append(bound)
                    else:
                        values.append(prev_bound + (bound - prev_bound) *
                                      (rank - prev_count) / (count - prev_count))
                    break
                prev_bound, prev_count = bound, count
        result[route] = (int(total), values)
    return result


def percentile(values, q):
    """The q-quantile (nearest rank) of a non-empty list."""
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(q * len(s) + 0.5)) - 1))]
