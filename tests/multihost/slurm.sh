# Sourced by tests/multihost/mh_slurm.sh after netns.sh: a private Slurm cluster on the two
# namespace hosts of netns.sh, torn down with them.
#
#   sl_require        exits 77 (skip) with a reason unless slurmctld, slurmd, srun, munged and
#                     Slurm's PMIx plugin (mpi_pmix_v4.so, with libpmix-dev's libpmix.so) are there
#   sl_setup DIR      in DIR: a fresh munge key and a munged of our own (its socket in DIR), a
#                     slurm.conf naming two nodes, $MH_A at $MH_ADDR_A and $MH_B at $MH_ADDR_B,
#                     slurmctld and slurmd inside $MH_A, a second slurmd inside $MH_B (each with
#                     its hostname in a UTS namespace of its own); waits until both nodes are idle
#   sl_srun ARGS      srun inside $MH_A with this cluster's slurm.conf (ARGS are srun's)
#   sl_teardown       stops munged (mh_teardown ends the Slurm daemons: they live in the
#                     namespaces)
# Nothing touches the machine's own /etc/slurm or munge: every file lives in DIR, every daemon
# listens inside the namespaces (ports are per namespace, so runs may overlap).
SL_DIR=
SL_PLUGDIR=/usr/lib/x86_64-linux-gnu/slurm-wlm

sl_require() {
  local c
  for c in slurmctld slurmd srun sinfo munged nsenter; do
    command -v "$c" >/dev/null 2>&1 ||
      mh_skip "$c not found (Debian: apt-get install slurmctld slurmd slurm-client munge)"
  done
  local multi
  multi=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
  SL_PLUGDIR=/usr/lib/$multi/slurm-wlm
  [ -e "$SL_PLUGDIR/mpi_pmix_v4.so" ] || [ -e "$SL_PLUGDIR/mpi_pmix.so" ] ||
    mh_skip "Slurm's PMIx plugin is missing from $SL_PLUGDIR (Debian: slurm-wlm-basic-plugins)"
  # The plugin dlopens the unversioned libpmix.so, which only libpmix-dev ships.
  [ -e "/usr/lib/$multi/libpmix.so" ] || [ -e "/usr/lib/$multi/pmix2/lib/libpmix.so" ] ||
    mh_skip "libpmix.so (Debian: libpmix-dev) is missing: Slurm's PMIx plugin cannot load"
}

# TmpFS per node: the PMIx plugin makes its client directory $TmpFS/spmix_appdir_UID_JOB.STEP
# and fails the step ("Cannot create directory ... File exists") when the other node, sharing
# this machine's /tmp, made it first.
sl_conf() {
  cat <<CONF
ClusterName=rrtmh
SlurmctldHost=$MH_A($MH_ADDR_A)
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
AuthInfo=socket=$SL_DIR/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$SL_DIR/state
SlurmdSpoolDir=$SL_DIR/spool-%n
TmpFS=$SL_DIR/tmp-%n
SlurmctldPidFile=$SL_DIR/slurmctld.pid
SlurmdPidFile=$SL_DIR/slurmd-%n.pid
SlurmctldLogFile=$SL_DIR/slurmctld.log
SlurmdLogFile=$SL_DIR/slurmd-%n.log
PlugStackConfig=/dev/null
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=$MH_A NodeAddr=$MH_ADDR_A CPUs=2 State=UNKNOWN
NodeName=$MH_B NodeAddr=$MH_ADDR_B CPUs=2 State=UNKNOWN
PartitionName=mh Nodes=$MH_A,$MH_B Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
}

# sl_in HOST COMMAND...: COMMAND inside namespace HOST with hostname HOST. Enters only the
# network namespace (nsenter), unlike "ip netns exec", which mounts a sysfs of its own without
# the cgroup file systems that slurmd needs to start.
sl_in() {
  local host=$1
  shift
  nsenter --net="/run/netns/$host" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$host" "$@"
}

sl_setup() {
  SL_DIR=$1
  export SLURM_CONF=$SL_DIR/slurm.conf
  mkdir -p "$SL_DIR/state" "$SL_DIR/spool-$MH_A" "$SL_DIR/spool-$MH_B" "$SL_DIR/tmp-$MH_A" "$SL_DIR/tmp-$MH_B" || return 1
  chmod 755 "$SL_DIR" || return 1
  head -c 1024 /dev/urandom >"$SL_DIR/munge.key" && chmod 400 "$SL_DIR/munge.key" || return 1
  munged --key-file="$SL_DIR/munge.key" --socket="$SL_DIR/munge.sock" \
    --pid-file="$SL_DIR/munged.pid" --log-file="$SL_DIR/munged.log" \
    --seed-file="$SL_DIR/munge.seed" --force || { echo "munged did not start"; return 1; }
  sl_conf >"$SLURM_CONF" || return 1
  # -i: ignore any saved state; every daemon forks into the background inside its namespace.
  sl_in "$MH_A" slurmctld -i -f "$SLURM_CONF" || { echo "slurmctld did not start"; return 1; }
  sl_in "$MH_A" slurmd -f "$SLURM_CONF" || { echo "slurmd on $MH_A did not start"; return 1; }
  sl_in "$MH_B" slurmd -f "$SLURM_CONF" || { echo "slurmd on $MH_B did not start"; return 1; }
  local i idle
  for i in $(seq 150); do
    idle=$(ip netns exec "$MH_A" sinfo -h -N -t idle -o '%N' 2>/dev/null | sort -u | wc -l)
    [ "$idle" = 2 ] && return 0
    sleep 0.2
  done
  echo "the Slurm nodes never became idle:"
  ip netns exec "$MH_A" sinfo -N 2>&1 | sed 's/^/    /'
  tail -n 20 "$SL_DIR"/*.log | sed 's/^/    /'
  return 1
}

sl_srun() { sl_in "$MH_A" srun "$@"; }
# The same as a command line for run_testlist.sh's MP_SRUN (srun needs $SLURM_CONF, exported).
sl_srun_cmd() { echo "nsenter --net=/run/netns/$MH_A srun"; }

sl_teardown() {
  [ -n "$SL_DIR" ] && [ -r "$SL_DIR/munged.pid" ] && kill "$(cat "$SL_DIR/munged.pid")" 2>/dev/null
  return 0
}
