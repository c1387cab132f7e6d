#!/bin/bash
# make check entry (root): a 4-rank job over two namespace hosts (netns.sh) under Open MPI's
# mpirun loses host B mid-job. Ranks 0 and 1 (host A) are each inside a call to their partner
# on host B, rank 2 and 3 (mh_kill_app).
#
# Host B dies in two steps, so that rrt's own detection is what the survivors see (not
# mpirun's, which would otherwise race it): B's Open MPI daemon is stopped (it can no longer
# report anything), B's ranks are killed (the kernel resets their connections), and once the
# survivors have reacted, everything left in B is killed. Two runs:
#   --return  the program chose RRT_ERRORS_RETURN: both survivors' calls must return
#             RRT_ERR_PROC_FAILED ("SURVIVOR rank 0/1" lines) within 30 s;
#   default   no handler chosen (RRT_PEER_FAILURE=auto): a survivor must tell the launcher to
#             abort the job (its "aborting the job" reason in mpirun's output) within 30 s.
# Both: mpirun exits non-zero within 30 s of the host's end, no process is left in either
# namespace, nothing of the job is left in /dev/shm.
# Skips (77) without root, ip netns, unshare or mpirun.openmpi.
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_srcdir=${top_srcdir:-$top_builddir}
. "$top_srcdir/tests/multihost/netns.sh"
mh_require

t=$(mktemp -d "${TMPDIR:-/tmp}/rrt-mhkill.XXXXXX") || exit 2
trap 'mh_teardown; rm -rf "$t"' EXIT
mh_setup || { echo "FAIL: could not build the namespace hosts"; exit 1; }

# waitfor SECONDS FILE REGEX [COUNT]: until FILE has COUNT lines matching REGEX (default 1).
# FILE may not exist yet: the launcher's shell creates it after the fork, and a missing file
# must count as no match (an empty count made `[` fail and ended the wait at once).
waitfor() {
  local start=$SECONDS n
  while n=$(grep -cE "$3" "$2" 2>/dev/null); [ "${n:-0}" -lt "${4:-1}" ]; do
    [ $((SECONDS - start)) -ge "$1" ] && return 1
    sleep 0.2
  done
}
# Processes of namespace $MH_B whose command name is $1 (or not $1 with -v).
pids_in_b() {
  local p c want=$1 neg=${2:-}
  for p in $(ip netns pids "$MH_B"); do
    c=$(cat /proc/$p/comm 2>/dev/null) || continue
    if [ -z "$neg" ] && [ "$c" = "$want" ]; then echo $p; fi
    if [ -n "$neg" ] && [ "$c" != "$want" ]; then echo $p; fi
  done
}

fail=0
run() {  # run MODE (return|default)
  local mode=$1 out=$t/$1.out arg=
  [ "$mode" = return ] && arg=--return
  # RRT_TCP_TIMEOUT bounds a wait on an unacknowledged peer if a reset got lost.
  timeout -k 5 120 "$MH_DIR/ns_mpirun.sh" "$MH_A" "$MH_B" -n 4 -x RRT_TCP_TIMEOUT=10 \
    "$top_builddir/tests/multihost/mh_kill_app" $arg >"$out" 2>&1 </dev/null &
  local launcher=$!
  if ! waitfor 60 "$out" '^RUNNING JOB'; then
    echo "FAIL: [$mode] the job did not get going"; sed 's/^/    /' "$out" | tail -30
    kill $launcher 2>/dev/null; wait $launcher; fail=1; return
  fi
  local job
  job=$(sed -n 's/^RUNNING JOB //p' "$out" | head -1 | sed 's/[^A-Za-z0-9_.-]/_/g')
  local daemon ranks
  daemon=$(pids_in_b orted)
  ranks=$(pids_in_b mh_kill_app)
  if [ -z "$daemon" ] || [ "$(echo $ranks | wc -w)" != 2 ]; then
    echo "FAIL: [$mode] want mpirun's daemon and 2 ranks in $MH_B, found '$daemon' / '$ranks'"
    kill $launcher 2>/dev/null; wait $launcher; fail=1; return
  fi
  kill -STOP $daemon
  kill -9 $ranks
  local killed=$SECONDS
  if [ "$mode" = return ]; then
    waitfor 30 "$out" '^SURVIVOR rank [01]: .*process failed' 2 ||
      { echo "FAIL: [$mode] ranks 0 and 1 did not both see RRT_ERR_PROC_FAILED within 30 s"; fail=1; }
  else
    waitfor 30 "$out" 'peer rank [23] \(node [0-9]+\) failed: .*aborting the job' ||
      { echo "FAIL: [$mode] no survivor aborted the job within 30 s"; fail=1; }
  fi
  local reacted=$((SECONDS - killed))
  # The rest of host B goes too.
  kill -9 $(ip netns pids "$MH_B") 2>/dev/null
  local gone=$SECONDS
  wait $launcher
  local rc=$? secs=$((SECONDS - gone))
  [ $rc -ne 0 ] || { echo "FAIL: [$mode] mpirun exited 0 after losing a host"; fail=1; }
  [ $rc -ne 124 ] && [ $rc -ne 137 ] || { echo "FAIL: [$mode] mpirun hung (killed by timeout)"; fail=1; }
  [ $secs -le 30 ] || { echo "FAIL: [$mode] mpirun took ${secs}s to end after the host"; fail=1; }
  grep -q '^FAIL' "$out" && { echo "FAIL: [$mode] a rank reported FAIL"; fail=1; }
  local i=0
  while [ -n "$(mh_pids)" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
  if [ -n "$(mh_pids)" ]; then
    echo "FAIL: [$mode] processes left in the namespace hosts:"; ps -o pid,args -p $(mh_pids); fail=1
  fi
  if ls /dev/shm/rrt-"$job"* >/dev/null 2>&1; then
    echo "FAIL: [$mode] left in /dev/shm:"; ls -l /dev/shm/rrt-"$job"*; fail=1
  fi
  echo "[$mode] survivors reacted in ${reacted}s, mpirun ended ${secs}s after the host, exit $rc; output:"
  grep -E '^SURVIVOR|aborting the job|^FAIL' "$out" | sed 's/^/    /' | head -8
}

run return
run default
[ $fail -eq 0 ] && echo "PASS: mh_kill_host"
exit $fail
