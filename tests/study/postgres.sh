#!/usr/bin/env bash
# A PostgreSQL server on this machine, for the tests and CI.
#
#   tests/study/postgres.sh install        apt-get the Debian package (postgresql) if no server binaries are found
#   tests/study/postgres.sh up             install if needed, initdb the cluster, start it, create role and database
#                                          `planaudit`; prints the SQLAlchemy URL (the only line on stdout)
#   tests/study/postgres.sh down           stop the cluster this script started (pg_ctl stop -m fast)
#   tests/study/postgres.sh status         exit 0 when the server answers; prints the URL
#   tests/study/postgres.sh url            print the URL
#   tests/study/postgres.sh createdb NAME  create a fresh database NAME (an existing one is dropped); prints its URL
#
# The cluster lives in $STATE/data (its pid file, postmaster.pid, with it), its log in $STATE/log
# and its socket in $STATE/run; `down` stops the cluster in $STATE/data and nothing else. `up` is
# idempotent: a running cluster is left alone. initdb and postgres refuse to run as root, so as
# root everything runs as the `postgres` system user (created if missing); as another user, as
# that user (then set PLANAUDIT_PG_STATE to somewhere it may write).
#
# The server: 127.0.0.1 only, port $PLANAUDIT_PG_PORT (default 55432), trust auth on loopback
# (no passwords for tests), max_connections 300 (a load benchmark runs 200 clients at once) and
# fsync on (tests kill servers and check what survived). Role `planaudit` is a superuser.
set -euo pipefail

STATE=$(realpath -m "${PLANAUDIT_PG_STATE:-/var/lib/planaudit-pg}")
DATA=$STATE/data
MARK="# written by planaudit tests/study/postgres.sh"
OS_USER=postgres
ROLE=planaudit
DB=planaudit

log() { echo "postgres.sh: $*" >&2; }
die() { log "$*"; exit 1; }

is_root() { [ "$(id -u)" = 0 ]; }
is_root || OS_USER=$(id -un)  # not root: the cluster is the caller's own

# The port: the environment's, else the one `up` recorded (so `url` agrees with a server
# started on another port), else 55432.
if [ -n "${PLANAUDIT_PG_PORT:-}" ]; then PORT=$PLANAUDIT_PG_PORT
elif [ -s "$STATE/port" ]; then PORT=$(cat "$STATE/port")
else PORT=55432; fi
[[ $PORT =~ ^[0-9]+$ ]] || die "bad port: $PORT"

url() { echo "postgresql+psycopg://$ROLE@127.0.0.1:$PORT/${1:-$DB}"; }

# The server binaries: the data directory's major version if it has one, else the newest
# Debian one (/usr/lib/postgresql/N/bin), else pg_ctl on PATH (it may be a symlink, as
# /usr/local/bin/pg_ctl is here, so its target's directory is taken).
server_bin() {  # server_bin DIR: DIR holds a usable server
  [ -x "$1/pg_ctl" ] && [ -x "$1/initdb" ] && [ -x "$1/postgres" ]
}
find_bin() {
  local d
  if [ -s "$DATA/PG_VERSION" ]; then
    d=/usr/lib/postgresql/$(cat "$DATA/PG_VERSION")/bin
    server_bin "$d" && { echo "$d"; return 0; }
  fi
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV); do
    server_bin "$d" && { echo "$d"; return 0; }
  done
  if command -v pg_ctl >/dev/null; then
    d=$(dirname "$(readlink -f "$(command -v pg_ctl)")")
    server_bin "$d" && { echo "$d"; return 0; }
  fi
  return 1
}
client() {  # client NAME: psql or pg_isready, from the server's directory first
  if [ -x "$BIN/$1" ]; then echo "$BIN/$1"; else command -v "$1" || die "no $1 found"; fi
}

install() {
  find_bin >/dev/null && return 0
  is_root || die "no PostgreSQL server found and not root: install postgresql yourself"
  command -v apt-get >/dev/null || die "no apt-get: install postgresql yourself"
  log "apt-get install postgresql"
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends postgresql >/dev/null
  find_bin >/dev/null || die "postgresql installed but no server binaries found"
}

as_owner() {  # run as the cluster's owner; from / so it does not warn about root's cwd
  if is_root; then (cd / && runuser -u "$OS_USER" -- "$@"); else (cd / && "$@"); fi
}

# Admin over TCP as the bootstrap superuser (trust on loopback), never the caller's PG* settings.
sql() {  # sql [psql args...]
  "$PSQL" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PORT" -U "$OS_USER" -d postgres "$@"
}

# The postmaster of $DATA is alive: its pid is a postgres that is not a zombie (pg_ctl status,
# and postgres itself, take a killed but unreaped postmaster for a running one).
running() {
  local pid st
  pid=$(head -1 "$DATA/postmaster.pid" 2>/dev/null) && [ -n "$pid" ] || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = postgres ] || return 1
  read -r _ _ st _ 2>/dev/null < "/proc/$pid/stat" && [ "$st" != Z ]
}
# as the bootstrap superuser, which always exists (else the server logs a failed login)
ready() { "$ISREADY" -q -h 127.0.0.1 -p "$PORT" -U "$OS_USER" -d postgres -t 5; }

owner_user() {
  is_root || return 0
  id -u "$OS_USER" >/dev/null 2>&1 && return 0
  log "creating system user $OS_USER"
  useradd --system --user-group --no-create-home --home-dir "$STATE" --shell /usr/sbin/nologin "$OS_USER"
}

init_cluster() {
  mkdir -p "$STATE" || die "cannot create $STATE (set PLANAUDIT_PG_STATE)"
  if is_root; then
    mkdir -p "$DATA" "$STATE/log" "$STATE/run"
    chown "$OS_USER:" "$DATA" "$STATE/log" "$STATE/run"
    as_owner test -w "$DATA" -a -x "$STATE" || die "$OS_USER cannot reach $STATE: put it elsewhere (PLANAUDIT_PG_STATE)"
  else
    mkdir -p "$DATA" "$STATE/log" "$STATE/run"
  fi
  chmod 700 "$DATA"
  if [ ! -s "$DATA/PG_VERSION" ]; then
    log "initdb $DATA"
    # C locale: the same collation on every machine
    as_owner "$BIN/initdb" -D "$DATA" -U "$OS_USER" -E UTF8 --locale=C -A trust \
      > "$STATE/log/initdb.log" 2>&1 || die "initdb failed (see $STATE/log/initdb.log)"
    printf "\n%s\ninclude 'planaudit.conf'\n" "$MARK" | as_owner tee -a "$DATA/postgresql.conf" >/dev/null
  fi
  # rewritten at each start, so a change of port or setting takes effect
  as_owner tee "$DATA/planaudit.conf" >/dev/null <<EOF
$MARK
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$STATE/run'
max_connections = 300
fsync = on
synchronous_commit = on
full_page_writes = on
EOF
  as_owner tee "$DATA/pg_hba.conf" >/dev/null <<EOF
$MARK
# TYPE  DATABASE  USER  ADDRESS       METHOD
local   all       all                 peer
host    all       all   127.0.0.1/32  trust
EOF
}

start() {
  # lock files left by a killed server would stop postgres from starting if their pid is
  # reused or still a zombie; not running() here, so they are stale
  if [ -e "$DATA/postmaster.pid" ]; then
    log "removing stale lock files of pid $(head -1 "$DATA/postmaster.pid")"
    rm -f "$DATA/postmaster.pid" "$STATE"/run/.s.PGSQL.*
  fi
  ready && die "port $PORT is taken by another server (set PLANAUDIT_PG_PORT)"
  as_owner "$BIN/pg_ctl" start -w -t 60 -D "$DATA" -l "$STATE/log/postgres.log" >/dev/null \
    || die "postgres did not start (see $STATE/log/postgres.log)"
}

objects() {
  [ "$(sql -tA -c "select 1 from pg_roles where rolname = '$ROLE'")" = 1 ] \
    || sql -c "create role $ROLE login superuser"
  [ "$(sql -tA -c "select 1 from pg_database where datname = '$DB'")" = 1 ] \
    || sql -c "create database $DB owner $ROLE template template0"
}

status() {
  ready && "$PSQL" -X -q -h 127.0.0.1 -p "$PORT" -U "$ROLE" -d "$DB" -tA -c 'select 1' >/dev/null 2>&1
}

up() {
  install
  BIN=$(find_bin); PSQL=$(client psql); ISREADY=$(client pg_isready)
  owner_user
  if running; then
    local was; was=$(cat "$STATE/port" 2>/dev/null || echo "")
    [ -z "$was" ] || [ "$was" = "$PORT" ] || die "running on port $was, not $PORT: down first"
    log "already running ($DATA)"
    # it may be in crash recovery after its backends were killed
    for _ in $(seq 300); do ready && break; sleep 0.2; done
    ready || die "running but not accepting connections (see $STATE/log/postgres.log)"
  else
    init_cluster
    start
    echo "$PORT" > "$STATE/port"
  fi
  objects
  status || die "postgres up but $ROLE cannot connect (see $STATE/log/postgres.log)"
  log "up: $("$BIN/postgres" --version), $DATA, port $PORT"
  url
}

down() {
  BIN=$(find_bin) || { log "no PostgreSQL server binaries: nothing to stop"; return 0; }
  if [ -d "$DATA" ] && running; then
    as_owner "$BIN/pg_ctl" stop -w -t 60 -D "$DATA" -m fast >/dev/null
    log "down"
  else
    log "not running"
  fi
}

createdb() {
  local name=${1:-}
  # a plain identifier, so it needs no quoting in SQL or in the URL
  [[ $name =~ ^[a-z_][a-z0-9_]{0,62}$ ]] || die "createdb: NAME must match [a-z_][a-z0-9_]* (got '$name')"
  [ "$name" != postgres ] && [[ $name != template* ]] || die "createdb: refusing to drop $name"
  BIN=$(find_bin) || die "no PostgreSQL server: run up first"
  PSQL=$(client psql); ISREADY=$(client pg_isready)
  status || die "not up: run $0 up first"
  # separate -c: DROP/CREATE DATABASE cannot run in one transaction; FORCE ends other sessions
  sql -c "set client_min_messages = warning" -c "drop database if exists $name with (force)" \
      -c "create database $name owner $ROLE template template0"
  url "$name"
}

case "${1:-}" in
  install) install ;;
  up) up ;;
  down) down ;;
  status)
    BIN=$(find_bin) || die "no PostgreSQL server installed"
    PSQL=$(client psql); ISREADY=$(client pg_isready)
    status || die "not answering on 127.0.0.1:$PORT"
    url ;;
  url) url ;;
  createdb) createdb "${2:-}" ;;
  *) echo "usage: $0 install|up|down|status|url|createdb NAME" >&2; exit 2 ;;
esac
