#!/usr/bin/env bash
# A single-node SLURM cluster on this machine, for tests/test_cluster.py and CI.
#
#   tests/cluster/slurm.sh install   apt-get the Debian packages (slurm-wlm, slurmdbd, munge, mariadb)
#   tests/cluster/slurm.sh up        install if needed, write the configs, start the daemons
#   tests/cluster/slurm.sh down      stop the daemons this script started (by their pid files)
#   tests/cluster/slurm.sh status    exit 0 when sinfo, sbatch and sacct answer
#
# As root, no systemd: every daemon is started directly and its pid kept under $STATE.
# `up` is idempotent (a running daemon is left alone) and `down` stops only what `up`
# started. Accounting (sacct, which snakemake-executor-plugin-slurm queries for job
# status; sacctmgr/sshare for the account) needs slurmdbd, which needs a MariaDB: one
# is started on a socket of its own, with its data under $STATE.
#
# The cluster: node `$(hostname -s)` at 127.0.0.1 with every core and the machine's
# memory, partition `planaudit` (default) and a second partition `short` (MaxTime 1
# minute, limits enforced at submission) for the tests of rejected submissions.
set -euo pipefail

STATE=${PLANAUDIT_SLURM_STATE:-/var/lib/planaudit-slurm}
CONF_DIR=/etc/slurm
MARK="# written by planaudit tests/cluster/slurm.sh"
CLUSTER=planaudit
PACKAGES=(slurm-wlm slurmdbd slurm-client munge mariadb-server)

log() { echo "slurm.sh: $*" >&2; }
die() { log "$*"; exit 1; }

need_root() { [ "$(id -u)" = 0 ] || die "must run as root (it starts munged, mariadbd, slurmdbd, slurmctld, slurmd)"; }

installed() { command -v slurmctld >/dev/null && command -v slurmdbd >/dev/null && command -v munged >/dev/null \
  && command -v mariadbd >/dev/null && command -v sacct >/dev/null; }

install() {
  need_root
  installed && return 0
  command -v apt-get >/dev/null || die "no apt-get: install ${PACKAGES[*]} yourself"
  log "apt-get install ${PACKAGES[*]}"
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${PACKAGES[@]}" >/dev/null
}

alive() { [ -s "$STATE/$1.pid" ] && kill -0 "$(cat "$STATE/$1.pid")" 2>/dev/null; }

wait_for() {  # wait_for SECONDS WHAT CMD...: poll until CMD succeeds
  local t=$1 what=$2; shift 2
  for _ in $(seq $((t * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  die "$what did not come up in ${t}s (logs in $STATE/log)"
}

write_conf() {  # write_conf PATH MODE: stdin to PATH unless someone else's file is there
  local path=$1 mode=$2
  if [ -e "$path" ] && ! grep -qF "$MARK" "$path"; then
    die "$path exists and was not written by this script: refusing to overwrite it"
  fi
  { echo "$MARK"; cat; } > "$path.tmp"
  chmod "$mode" "$path.tmp"
  mv "$path.tmp" "$path"
}

configs() {
  local host cpus mem
  host=$(hostname -s)
  cpus=$(nproc)
  mem=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
  mkdir -p "$CONF_DIR" "$STATE"/{log,ctld,slurmd,mysql}
  write_conf "$CONF_DIR/slurm.conf" 644 <<EOF
ClusterName=$CLUSTER
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/slurmd
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
EnforcePartLimits=ALL
ReturnToService=2
MinJobAge=300
AccountingStoreFlags=job_comment
SchedulerParameters=sched_interval=2
MailProg=/bin/true
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=$CLUSTER Nodes=ALL Default=YES MaxTime=INFINITE State=UP
PartitionName=short Nodes=ALL Default=NO MaxTime=1 State=UP
EOF
  write_conf "$CONF_DIR/slurmdbd.conf" 600 <<EOF
AuthType=auth/munge
DbdHost=localhost
SlurmUser=root
PidFile=$STATE/slurmdbd.pid
LogFile=$STATE/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageLoc=slurm_acct_db
StorageUser=root
StoragePort=3306
EOF
  # cgroup.conf is read even with proctrack/linuxproc on some builds; none is needed
}

start_munge() {
  alive munged && return 0
  [ -s /etc/munge/munge.key ] || { mungekey --create --force >/dev/null 2>&1 || \
    dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null; }
  chown munge:munge /etc/munge/munge.key; chmod 600 /etc/munge/munge.key
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge
  runuser -u munge -- munged --pid-file=/run/munge/munged.pid
  wait_for 10 munged sh -c 'munge -n | unmunge'
  cp /run/munge/munged.pid "$STATE/munged.pid"
}

start_mariadb() {
  alive mariadbd && return 0
  if [ ! -d "$STATE/mysql/mysql" ]; then
    mariadb-install-db --user=mysql --datadir="$STATE/mysql" --auth-root-authentication-method=socket \
      > "$STATE/log/mariadb-install.log" 2>&1
  fi
  chown -R mysql:mysql "$STATE/mysql"
  mkdir -p /run/mysqld; chown mysql:mysql /run/mysqld
  # on localhost only; its pid and log where the mysql user may write them
  mariadbd --user=mysql --datadir="$STATE/mysql" --socket=/run/mysqld/mysqld.sock \
    --bind-address=127.0.0.1 --port=3306 --pid-file=/run/mysqld/planaudit.pid \
    --innodb-buffer-pool-size=64M > "$STATE/log/mariadb.log" 2>&1 &
  wait_for 30 mariadb mariadb --socket=/run/mysqld/mysqld.sock -e 'select 1'
  wait_for 10 "mariadb pid file" test -s /run/mysqld/planaudit.pid
  cp /run/mysqld/planaudit.pid "$STATE/mariadbd.pid"
  mariadb --socket=/run/mysqld/mysqld.sock -e 'create database if not exists slurm_acct_db'
}

start_slurm() {
  if ! alive slurmdbd; then
    slurmdbd
    wait_for 30 slurmdbd sacctmgr -n list cluster
  fi
  sacctmgr -n list cluster format=cluster | grep -qw "$CLUSTER" \
    || sacctmgr -i add cluster "$CLUSTER" >/dev/null
  if ! alive slurmctld; then
    slurmctld
    wait_for 30 slurmctld scontrol ping
  fi
  if ! alive slurmd; then
    slurmd
  fi
  wait_for 30 "node $(hostname -s) idle" sh -c "sinfo -h -N -o %t | grep -qE '^(idle|mix|alloc)'"
  sacctmgr -n list account format=account | grep -qw "$CLUSTER" \
    || sacctmgr -i add account "$CLUSTER" Cluster="$CLUSTER" >/dev/null
  sacctmgr -n list user root format=defaultaccount | grep -qw "$CLUSTER" \
    || sacctmgr -i add user root Account="$CLUSTER" DefaultAccount="$CLUSTER" >/dev/null
}

status() {
  sinfo -h >/dev/null 2>&1 && sacct -n -X -S now-1minutes >/dev/null 2>&1 \
    && sinfo -h -N -o %t | grep -qE '^(idle|mix|alloc)'
}

up() {
  need_root
  install
  configs
  start_munge
  start_mariadb
  start_slurm
  status || die "cluster up but sinfo/sacct do not answer (logs in $STATE/log)"
  log "up: $(sinfo -h -o '%P %D %c %m %l' | tr '\n' ';')"
}

stop() {  # stop NAME: by its pid file, waiting for it to end
  local pidfile="$STATE/$1.pid" pid
  [ -s "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
  fi
  rm -f "$pidfile"
}

down() {
  need_root
  # running jobs are cancelled first, so slurmd leaves no orphans
  command -v scancel >/dev/null && alive slurmctld && scancel -u root 2>/dev/null || true
  for d in slurmd slurmctld slurmdbd mariadbd munged; do stop "$d"; done
  log "down"
}

case "${1:-}" in
  install) install ;;
  up) up ;;
  down) down ;;
  status) status ;;
  *) echo "usage: $0 install|up|down|status" >&2; exit 2 ;;
esac
