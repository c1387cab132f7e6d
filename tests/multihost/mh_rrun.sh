#!/bin/bash
# make check entry (root): rrun on several hosts delegates to Open MPI's mpirun. On the two
# network-namespace hosts of netns.sh, "rrun --host A:2,B:2 -n 4 PROG" started inside host A
# (with mpirun's remote-start agent pointed at ns_agent.sh, as ssh would be) must
#   1. print, with --dry-run, the mpirun command it would exec (host list, -np, -x of rrt's
#      RRT_* variables and of -x VAR=VALUE), and refuse a bad host list / too few slots with
#      exit 2 before starting anything;
#   2. run coll_check and p2p_sizes as one 4-rank job across both hosts, with RRT_STATS=1 proving
#      that the same-host pairs went over shm and the cross-host pairs over TCP between the
#      hosts' addresses (mh_stats.py): the variable reached the ranks on host B through -x;
#   3. pass a rank's failure on as mpirun's exit status;
# and leave nothing running inside the namespaces.
# Skips (77) without root, ip netns, unshare or mpirun.openmpi.
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_srcdir=${top_srcdir:-$top_builddir}
. "$top_srcdir/tests/multihost/netns.sh"
mh_require

t=$(mktemp -d "${TMPDIR:-/tmp}/rrt-mhr.XXXXXX") || exit 2
trap 'mh_teardown; rm -rf "$t"' EXIT
mh_setup || { echo "FAIL: could not build the namespace hosts"; exit 1; }

# rrun passes every RRT_* variable of its environment on with -x: start from none.
for v in $(compgen -e | grep '^RRT_'); do unset "$v"; done
RRUN=$top_builddir/rrun
COLL=$top_builddir/tests/coll/coll_check
# rrun inside host A; mpirun (which rrun execs) reaches host B through the agent.
# in_a COMMAND-LINE (one shell-quoted string, as ssh would take it)
in_a=(timeout -k 5 120 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
      OMPI_MCA_plm_rsh_agent="$MH_DIR/ns_agent.sh" "$MH_DIR/ns_agent.sh" "$MH_A")
q() { printf '%q ' "$@"; }
fail=0

# 1. the delegated command, and errors as values
out=$t/dry.out
RRT_LOG=warn "${in_a[@]}" "$(q "$RRUN" --dry-run --host "$MH_A:2,$MH_B:2" -n 4 -x RRT_STATS=1 "$COLL" --big)" \
  >"$out" 2>&1
rc=$?
want="mpirun.openmpi -np 4 --host $MH_A:2,$MH_B:2 -x RRT_LOG -x RRT_STATS=1 $COLL --big"
if [ $rc -eq 0 ] && grep -qxF -- "$want" "$out"; then
  echo "PASS: --dry-run prints: $want"
else
  echo "FAIL: --dry-run (exit $rc), want '$want', got:"; sed 's/^/    /' "$out"; fail=1
fi
bad() {  # bad WHAT PATTERN RRUN-ARGS...
  local what=$1 pattern=$2
  shift 2
  "${in_a[@]}" "$(q "$RRUN" "$@")" >"$out" 2>&1 </dev/null
  local rc=$?
  if [ $rc -eq 2 ] && grep -q -- "$pattern" "$out"; then
    echo "PASS: $what: exit 2, '$pattern'"
  else
    echo "FAIL: $what: exit $rc (want 2 and '$pattern'):"; sed 's/^/    /' "$out"; fail=1
  fi
}
bad "empty host entry" "empty entry" --host "$MH_A:2,,$MH_B:2" -n 4 "$COLL"
bad "bad slot count" "invalid slot count" --host "$MH_A:two" -n 2 "$COLL"
bad "too few slots" "needs more than the 4 slots" --host "$MH_A:2,$MH_B:2" -n 5 "$COLL"
printf '%s slots=2\n%s slots=2 cpus=1\n' "$MH_A" "$MH_B" >"$t/hostfile"
bad "bad hostfile" "hostfile line 2" --hostfile "$t/hostfile" -n 4 "$COLL"
bad "missing hostfile" "cannot read hostfile" --hostfile "$t/nothing" -n 4 "$COLL"

# 2. the job itself, across both hosts (once by --host, once by --hostfile)
run_job() {  # run_job LABEL HOSTARGS...
  local label=$1
  shift
  local o=$t/job.$label.out rc
  "${in_a[@]}" "$(q "$RRUN" "$@" -n 4 --timeout 90 -x RRT_STATS=1 "$COLL")" >"$o" 2>&1 </dev/null
  rc=$?
  if [ $rc -ne 0 ] || ! grep -q '^PASS coll_check (4 ranks)' "$o"; then
    echo "FAIL: [$label] rrun $* coll_check (exit $rc)"; tail -40 "$o" | sed 's/^/    /'
    return 1
  fi
  python3 "$MH_DIR/mh_stats.py" "$o" "$MH_ADDR_A" "$MH_ADDR_B" "rrun $label"
}
run_job host --host "$MH_A:2,$MH_B:2" || fail=1
printf '%s slots=2\n%s slots=2\n' "$MH_A" "$MH_B" >"$t/hostfile"
run_job hostfile --hostfile "$t/hostfile" || fail=1
o=$t/p2p.out
"${in_a[@]}" "$(q "$RRUN" --host "$MH_A:2,$MH_B:2" -n 4 "$top_builddir/tests/mp/p2p_sizes")" \
  >"$o" 2>&1 </dev/null
rc=$?
if [ $rc -eq 0 ] && grep -q '^PASS p2p_sizes (4 ranks)' "$o"; then
  echo "PASS: rrun --host ... p2p_sizes"
else
  echo "FAIL: rrun --host ... p2p_sizes (exit $rc)"; tail -30 "$o" | sed 's/^/    /'; fail=1
fi

# 3. a failing rank's status comes back through mpirun and rrun
o=$t/fail.out
"${in_a[@]}" "$(q "$RRUN" --host "$MH_A:2,$MH_B:2" -n 4 sh -c 'exit 3')" >"$o" 2>&1 </dev/null
rc=$?
if [ $rc -eq 3 ]; then
  echo "PASS: a rank's exit 3 is rrun's exit status"
else
  echo "FAIL: ranks exiting 3 gave rrun exit $rc (want 3)"; tail -20 "$o" | sed 's/^/    /'; fail=1
fi

left=$(mh_pids)
if [ -n "$left" ]; then
  echo "FAIL: processes left inside the namespace hosts:"; ps -o pid,args -p $left; fail=1
fi
[ $fail -eq 0 ] && echo "PASS: mh_rrun"
exit $fail
