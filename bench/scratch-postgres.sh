# shellcheck shell=bash
# Sourced by bench scripts: a throwaway PostgreSQL (Debian's binaries; as the `postgres`
# user when run as root) on a Unix socket in a scratch directory, no TCP listener.
#   scratch_pg_start DIR [postgres -c options...]   initdb DIR/pg, start it, create database
#                                                   xet (role xet); sets PG_URL
#   scratch_pg_stop DIR                             fast shutdown (idempotent)
#   scratch_pg_bin TOOL                             the path of one of its binaries
PG_BIN=${XETSTORE_PG_BINDIR:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}

scratch_pg_as() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

scratch_pg_bin() { echo "$PG_BIN/$1"; }

scratch_pg_start() {
  local dir=$1 opts=""
  shift
  [ -x "$PG_BIN/postgres" ] || { echo "PostgreSQL not found: apt-get install postgresql" >&2; return 1; }
  for o in "$@"; do opts+=" -c $o"; done
  chmod 755 "$dir"
  [ "$(id -u)" = 0 ] && chown postgres "$dir"
  scratch_pg_as "$PG_BIN/initdb" -D "$dir/pg" -U xet --auth=trust >/dev/null
  scratch_pg_as "$PG_BIN/pg_ctl" -D "$dir/pg" -l "$dir/pg.log" -w \
    -o "-k $dir -c listen_addresses=$opts" start >/dev/null
  "$PG_BIN/createdb" -h "$dir" -U xet xet
  # shellcheck disable=SC2034  # read by the sourcing script
  PG_URL="postgresql:///xet?host=$dir&user=xet"
}

scratch_pg_stop() {
  scratch_pg_as "$PG_BIN/pg_ctl" -D "$1/pg" -m fast stop >/dev/null 2>&1 || true
}
