# shellcheck shell=bash
# Shared by tests/interop/run and bench/run-js-bench: installs the pinned npm packages and
# runs a throw-away `xetstore serve` on a free loopback port.
#
# Callers set INTEROP_DIR (this folder) and call, in order:
#   interop_npm_ci                      npm ci, only when node_modules is missing or stale
#   interop_start_server BIN WORKDIR    starts BIN serve; sets XETSTORE_URL, XETSTORE_TOKEN,
#                                       XETSTORE_DATA_DIR, XETSTORE_SERVER_PID, SERVER_LOG
#   interop_stop_server                 SIGTERM to that one process, then wait (call from a trap)

interop_require_node() {
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "interop: node and npm are required (scripts/install-deps installs them)" >&2
    return 1
  fi
}

interop_npm_ci() {
  interop_require_node
  local stamp="$INTEROP_DIR/node_modules/.xetstore-lock-sha256"
  local want
  want=$(sha256sum "$INTEROP_DIR/package-lock.json" | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    return 0
  fi
  echo "interop: npm ci in $INTEROP_DIR" >&2
  (cd "$INTEROP_DIR" && npm ci --no-audit --no-fund --loglevel=error >&2)
  echo "$want" >"$stamp"
}

interop_start_server() {
  local bin=$1 work=$2
  XETSTORE_DATA_DIR="$work/data"
  SERVER_LOG="$work/server.log"
  "$bin" serve --listen 127.0.0.1:0 --data-dir "$XETSTORE_DATA_DIR" 2>"$SERVER_LOG" &
  XETSTORE_SERVER_PID=$!
  local deadline=$((SECONDS + 30)) url=""
  while [ -z "$url" ]; do
    if ! kill -0 "$XETSTORE_SERVER_PID" 2>/dev/null; then
      echo "interop: xetstore serve exited at start:" >&2
      tail -n 20 "$SERVER_LOG" >&2
      return 1
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "interop: xetstore serve printed no URL within 30 s" >&2
      return 1
    fi
    url=$(sed -n 's/^xetstore serving on \(http[^ ]*\) .*/\1/p' "$SERVER_LOG" | head -n 1)
    [ -n "$url" ] || sleep 0.1
  done
  # The URL is printed once the socket listens; /healthz proves requests are served.
  until node -e 'fetch(process.argv[1] + "/healthz").then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$url"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "interop: $url/healthz did not answer 200 within 30 s" >&2
      return 1
    fi
    sleep 0.2
  done
  XETSTORE_URL=$url
  XETSTORE_TOKEN=$(cat "$XETSTORE_DATA_DIR/admin-token")
  export XETSTORE_URL XETSTORE_TOKEN XETSTORE_DATA_DIR
}

interop_stop_server() {
  if [ -n "${XETSTORE_SERVER_PID:-}" ] && kill -0 "$XETSTORE_SERVER_PID" 2>/dev/null; then
    kill -TERM "$XETSTORE_SERVER_PID" 2>/dev/null || true
    wait "$XETSTORE_SERVER_PID" 2>/dev/null || true
  fi
  XETSTORE_SERVER_PID=""
}
