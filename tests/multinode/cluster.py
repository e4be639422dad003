"""A multi-node xetstore deployment on one machine, for tests/multinode/run and
bench/run-multinode-bench (python3 stdlib, root).

Every part is the real program:
  Postgres   a PostgreSQL 15 cluster (Debian's `postgresql`): initdb into the scratch
             directory, a Unix socket only, run as the `postgres` user (as
             tests/support/postgres_test_server.cc does), fsync off unless `durable`
  S3rver     s3rver from tests/s3rver (npm) on a loopback port, one bucket
  Haproxy    haproxy (Debian's `haproxy`) on a loopback port: round-robin over the nodes,
             health check GET /healthz every 200 ms, a CSV stats page
  Cluster    the three above plus N `xetstore serve` nodes (tests/hardening/harness.py's
             ServerProcess) sharing the index, the object store (s3rver, or for benchmarks
             one local directory) and the signing secret

Children started here die with this process (PR_SET_PDEATHSIG), so a killed test leaves
nothing running; Cluster.close() stops everything in order.
"""

import ctypes
import csv
import io
import os
import pwd
import re
import signal
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "hardening"))
import harness  # noqa: E402

PG_BINDIR = os.environ.get("XETSTORE_PG_BINDIR", "/usr/lib/postgresql/15/bin")
S3RVER = os.environ.get("XETSTORE_S3RVER",
                        os.path.join(ROOT, "tests", "s3rver", "node_modules", ".bin", "s3rver"))
S3_BUCKET = "xet-multinode"
S3_ACCESS_KEY = "S3RVER"  # s3rver's built-in credentials
S3_SECRET_KEY = "S3RVER"

_libc = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG = 1


def die_with_parent(sig=signal.SIGKILL):
    """preexec_fn: the child gets `sig` when the thread that started it exits (so start
    long-lived children from the main thread, or wait for them in the thread that started
    them)."""
    def f():
        _libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    return f


def _wait_for(what, pred, timeout, proc=None, log=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        if proc is not None and proc.poll() is not None:
            raise RuntimeError("%s exited with %d at start:\n%s"
                               % (what, proc.returncode, _tail(log)))
        time.sleep(0.05)
    raise RuntimeError("%s not ready within %.0f s:\n%s" % (what, timeout, _tail(log)))


def _tail(path, lines=20):
    if not path or not os.path.exists(path):
        return ""
    with open(path, "rb") as f:
        return b"".join(f.read().splitlines(keepends=True)[-lines:]).decode("utf-8", "replace")


def _stop(proc, sig, timeout=20.0):
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(sig)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class Postgres:
    PORT = 5432  # names the socket file only, inside our own directory
    ROLE = "xet"

    def __init__(self, root, durable=False):
        self.root = root
        self.durable = durable  # fsync on (benchmarks); the tests run with fsync off
        self.data = os.path.join(root, "data")
        self.sock = os.path.join(root, "sock")
        self.log = os.path.join(root, "server.log")
        self.proc = None

    def _as_server_user(self):
        if os.geteuid() != 0:
            return {}
        pw = pwd.getpwnam("postgres")  # KeyError: install postgresql (scripts/install-deps)
        return {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}

    def start(self):
        for tool in ("initdb", "postgres", "psql"):
            path = os.path.join(PG_BINDIR, tool) if tool != "psql" else "/usr/bin/psql"
            if not os.access(path, os.X_OK):
                raise RuntimeError("%s not found: apt-get install postgresql "
                                   "(scripts/install-deps) or set XETSTORE_PG_BINDIR" % path)
        os.makedirs(self.sock)
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            for d in (self.root, self.sock):
                os.chown(d, pw.pw_uid, pw.pw_gid)
        with open(os.path.join(self.root, "initdb.log"), "wb") as log:
            subprocess.run([os.path.join(PG_BINDIR, "initdb"), "-D", self.data, "-U", self.ROLE,
                            "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"],
                           stdout=log, stderr=log, stdin=subprocess.DEVNULL, check=True,
                           **self._as_server_user())
        log = open(self.log, "ab")
        try:
            self.proc = subprocess.Popen(
                [os.path.join(PG_BINDIR, "postgres"), "-D", self.data, "-k", self.sock,
                 "-p", str(self.PORT), "-c", "listen_addresses=",
                 "-c", "fsync=%s" % ("on" if self.durable else "off"),
                 "-c", "max_connections=300", "-c", "shared_buffers=64MB"],
                stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                preexec_fn=die_with_parent(signal.SIGQUIT), **self._as_server_user())
        finally:
            log.close()
        _wait_for("postgres", lambda: self.psql("postgres", "SELECT 1", check=False)[0] == 0,
                  30, self.proc, self.log)

    def psql(self, db, sql, check=True):
        p = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                            "-h", self.sock, "-p", str(self.PORT), "-U", self.ROLE, "-d", db,
                            "-c", sql], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL)
        if check and p.returncode != 0:
            raise RuntimeError("psql %r: %s" % (sql, p.stderr.decode()))
        return p.returncode, p.stdout.decode()

    def create_database(self, db):
        self.psql("postgres", 'CREATE DATABASE "%s"' % db)
        return self.url(db)

    def url(self, db):
        return "postgresql:///%s?host=%s&port=%d&user=%s" % (db, self.sock, self.PORT, self.ROLE)

    def stop(self):
        _stop(self.proc, signal.SIGINT)  # fast shutdown


class S3rver:
    LISTENING = re.compile(r"S3rver listening on (\S+)")

    def __init__(self, root):
        self.root = root
        self.data = os.path.join(root, "data")
        self.log = os.path.join(root, "s3rver.log")
        self.proc = None
        self.endpoint = None

    def start(self):
        if not os.access(S3RVER, os.X_OK):
            raise RuntimeError("s3rver not found at %s: run tests/s3rver/install" % S3RVER)
        os.makedirs(self.data)
        env = dict(os.environ)
        # s3rver's continuation tokens use DES, which OpenSSL 3 keeps in its legacy provider.
        env["NODE_OPTIONS"] = "--openssl-legacy-provider"
        log = open(self.log, "wb")
        try:
            self.proc = subprocess.Popen(
                [S3RVER, "-d", self.data, "-a", "127.0.0.1", "-p", "0", "--configure-bucket",
                 S3_BUCKET, "--no-vhost-buckets", "--silent"],
                stdout=log, stderr=log, stdin=subprocess.DEVNULL, env=env,
                preexec_fn=die_with_parent())
        finally:
            log.close()

        def ready():
            with open(self.log, "rb") as f:
                m = self.LISTENING.search(f.read().decode("utf-8", "replace"))
            if m:
                self.endpoint = "http://" + m.group(1)
            return m is not None
        _wait_for("s3rver", ready, 30, self.proc, self.log)

    def stop(self):
        _stop(self.proc, signal.SIGTERM)


class Haproxy:
    """haproxy in the foreground (-db) with one backend of `servers` [(name, port)]."""

    def __init__(self, root, servers):
        self.root = root
        self.servers = servers
        self.port = harness.free_port()
        self.stats_port = harness.free_port()
        self.cfg = os.path.join(root, "haproxy.cfg")
        self.log = os.path.join(root, "haproxy.log")
        self.proc = None
        self.url = "http://127.0.0.1:%d" % self.port

    def start(self):
        if not os.access("/usr/sbin/haproxy", os.X_OK):
            raise RuntimeError("haproxy not found: apt-get install haproxy (scripts/install-deps)")
        lines = [
            "global",
            "  maxconn 4096",
            "defaults",
            "  mode http",
            "  option http-server-close",  # a new server connection per request: round-robin
            "  timeout connect 2s",
            "  timeout client 120s",
            "  timeout server 120s",
            "  retries 2",
            "  option redispatch",
            "frontend lb",
            "  bind 127.0.0.1:%d" % self.port,
            "  default_backend nodes",
            "frontend stats",
            "  bind 127.0.0.1:%d" % self.stats_port,
            "  stats enable",
            "  stats uri /stats",
            "backend nodes",
            "  balance roundrobin",
            "  option httpchk GET /healthz",
            "  http-check expect status 200",
            "  default-server check inter 200ms fall 2 rise 1",
        ] + ["  server %s 127.0.0.1:%d" % (n, p) for n, p in self.servers]
        with open(self.cfg, "w") as f:
            f.write("\n".join(lines) + "\n")
        log = open(self.log, "wb")
        try:
            self.proc = subprocess.Popen(["/usr/sbin/haproxy", "-db", "-f", self.cfg],
                                         stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                                         preexec_fn=die_with_parent())
        finally:
            log.close()
        _wait_for("haproxy", lambda: self.up() == {n for n, _ in self.servers}, 30, self.proc,
                  self.log)

    def status(self):
        """{server name: status ("UP", "DOWN", ...)} from the stats CSV; {} when unreachable."""
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/stats;csv" % self.stats_port,
                                        timeout=2) as r:
                text = r.read().decode()
        except OSError:
            return {}
        rows = csv.DictReader(io.StringIO(text.lstrip("# ")))
        return {row["svname"]: row["status"] for row in rows
                if row["pxname"] == "nodes" and row["svname"] not in ("FRONTEND", "BACKEND")}

    def up(self):
        return {n for n, s in self.status().items() if s.startswith("UP")}

    def wait_status(self, name, want_up, timeout=15.0):
        """Waits until haproxy's health check sees `name` up (or down); returns whether it did."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if (name in self.up()) == want_up:
                return True
            time.sleep(0.05)
        return False

    def stop(self):
        _stop(self.proc, signal.SIGTERM)


class Node(harness.ServerProcess):
    """One `xetstore serve` of the cluster; `name` is its haproxy server name."""

    def __init__(self, name, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.name = name
        self.url = "http://127.0.0.1:%d" % self.port
        self.preexec_fn = die_with_parent()  # start (and restart) from the main thread


class Cluster:
    """PostgreSQL + s3rver + `nodes` xetstore serve nodes + haproxy, under `work`."""

    def __init__(self, binary, work, nodes=3, serve_args=(), db="xetstore", durable=False,
                 objects="s3", objects_dir=None):
        self.binary = binary
        self.work = work
        self.pg = Postgres(os.path.join(work, "pg"), durable)
        self.s3 = S3rver(os.path.join(work, "s3"))
        self.db = db
        self.serve_args = list(serve_args)
        self.node_count = nodes
        self.nodes = []
        self.lb = None
        self.index_url = None
        self.storage_args = []
        self.backend_args = []
        self.admin_token = None
        self.objects = objects  # "s3": s3rver; "local": one directory all nodes share
        self.objects_dir = objects_dir  # "local": that directory (default: under work)

    def start(self):
        os.chmod(self.work, 0o755)  # the postgres user must reach its directory
        os.makedirs(self.pg.root)
        os.makedirs(self.s3.root)
        self.pg.start()
        self.index_url = self.pg.create_database(self.db)
        shared = os.path.join(self.work, "shared")
        os.makedirs(shared)
        # The storage flags (what the operator tools take); the nodes add the secret.
        self.storage_args = ["--index", self.index_url]
        if self.objects == "s3":
            self.s3.start()
            s3_secret = os.path.join(shared, "s3-secret")
            with open(s3_secret, "w") as f:
                f.write(S3_SECRET_KEY + "\n")
            os.chmod(s3_secret, 0o600)
            self.storage_args += ["--objects", "s3://%s/objects" % S3_BUCKET,
                                  "--s3-endpoint", self.s3.endpoint, "--s3-region", "us-east-1",
                                  "--s3-access-key", S3_ACCESS_KEY, "--s3-secret-file", s3_secret]
        else:
            self.storage_args += ["--objects",
                                  self.objects_dir or os.path.join(shared, "objects")]
        self.backend_args = self.storage_args + ["--secret-file", os.path.join(shared, "secret")]
        for i in range(self.node_count):
            name = "node%d" % (i + 1)
            node = Node(name, self.binary, os.path.join(self.work, name), harness.free_port(),
                        os.path.join(self.work, name + ".log"),
                        self.backend_args + self.serve_args)
            self.nodes.append(node)
            node.start()  # one after another: the first creates the schema and admin token
            if i == 0:
                with open(os.path.join(node.data_dir, "admin-token")) as f:
                    self.admin_token = f.read().strip()
        self.lb = Haproxy(self.work, [(n.name, n.port) for n in self.nodes])
        self.lb.start()

    def token(self, name, permission, scope):
        """`xetstore token create` on the shared index (no node involved); the hf_ secret."""
        p = subprocess.run([self.binary, "token", "--index", self.index_url, "create", "--name",
                            name, "--permission", permission, "--scope", scope],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True,
                           stdin=subprocess.DEVNULL)
        return p.stdout.decode().strip().splitlines()[-1].strip()

    def close(self):
        """Stops everything that runs (idempotent): haproxy, the nodes, s3rver, PostgreSQL."""
        if self.lb:
            self.lb.stop()
        for n in self.nodes:
            if n.proc and n.proc.poll() is None:
                n.stop(timeout=10)
        self.s3.stop()
        self.pg.stop()


def install_cleanup_handlers(cleanup):
    """SIGINT/SIGTERM/SIGHUP run `cleanup` once, then exit 130/143; returns nothing."""
    done = []

    def handler(signum, _frame):
        if not done:
            done.append(signum)
            try:
                cleanup()
            finally:
                os._exit(128 + signum)
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, handler)
