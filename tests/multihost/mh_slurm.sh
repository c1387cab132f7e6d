#!/bin/bash
# make check entry (root): the multi-host checks of mh_suite.sh under Slurm instead of Open MPI.
# A private Slurm cluster (slurm.sh: munged, slurmctld and two slurmd, every file in a scratch
# directory) runs on the two network-namespace hosts of netns.sh; then
#   1. lines of tests/multihost/testlist through "srun --mpi=pmix -N 2 --ntasks-per-node=2":
#      point-to-point (sizes across the eager/rendezvous limits, ANY_SOURCE, ssend) and the
#      collective checks, 4 ranks, 2 per host (mh_suite.sh runs the whole list under mpirun;
#      here the launcher is what is tested, and a subset keeps the test near a minute);
#   2. coll_check once more with RRT_STATS=1: every same-host pair sent over shm, every
#      cross-host pair over TCP between the two namespaces' addresses (mh_stats.py);
#   3. rrun inside an allocation (salloc -N 2 --ntasks-per-node=2 rrun -n 4 ...): rrun
#      delegates to srun --mpi=pmix (--dry-run prints that command) and the same check passes;
# and nothing is left running inside the namespaces afterwards.
# Skips (77) without root, ip netns, or Slurm (slurmctld slurmd slurm-client munge) with its
# PMIx plugin (slurm-wlm-basic-plugins, libpmix-dev).
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_srcdir=${top_srcdir:-$top_builddir}
. "$top_srcdir/tests/multihost/netns.sh"
. "$top_srcdir/tests/multihost/slurm.sh"
mh_require_netns
sl_require

t=$(mktemp -d "${TMPDIR:-/tmp}/rrt-mhs.XXXXXX") || exit 2
trap 'mh_teardown; sl_teardown; rm -rf "$t"' EXIT
mh_setup || { echo "FAIL: could not build the namespace hosts"; exit 1; }
sl_setup "$t/slurm" || { echo "FAIL: could not start the Slurm cluster"; exit 1; }

mkdir -p "$t/tests/mp"
for p in p2p_sizes p2p_anysource p2p_nonblocking p2p_ssend p2p_order p2p_comm p2p_probe \
         p2p_sendrecv p2p_datatype p2p_anytag_internal; do
  ln -s "$top_builddir/tests/mp/$p" "$t/tests/mp/$p"
done
ln -s "$top_builddir/tests/coll/coll_check" "$t/tests/mp/coll_check"

srun_cmd="$(sl_srun_cmd) -N 2 --ntasks-per-node=2"
fail=0
MP_LAUNCHER=srun MP_SRUN="$srun_cmd" MP_TIMEOUT=60 top_builddir=$t \
  "$top_srcdir/tests/mp/run_testlist.sh" \
  -k '^(p2p_sizes 4|p2p_anysource 4|p2p_ssend 4|coll_check 4)[[:space:]]*$' \
  "$top_srcdir/tests/multihost/testlist" || fail=1

out=$t/stats.out
timeout -k 5 90 env RRT_STATS=1 $srun_cmd --mpi=pmix -n 4 "$top_builddir/tests/coll/coll_check" \
  >"$out" 2>&1 </dev/null
rc=$?
if [ $rc -ne 0 ] || ! grep -q '^PASS coll_check (4 ranks)' "$out"; then
  echo "FAIL: coll_check with RRT_STATS=1 under srun (exit $rc)"; sed 's/^/    /' "$out" | tail -40
  fail=1
else
  python3 "$MH_DIR/mh_stats.py" "$out" "$MH_ADDR_A" "$MH_ADDR_B" srun || fail=1
fi

# 3. rrun inside an allocation runs the job through srun
salloc_cmd="nsenter --net=/run/netns/$MH_A salloc -Q -N 2 --ntasks-per-node=2"
out=$t/salloc-dry.out
timeout -k 5 60 $salloc_cmd "$top_builddir/rrun" --dry-run -n 4 -x RRT_STATS=1 \
  "$top_builddir/tests/coll/coll_check" >"$out" 2>&1 </dev/null
want="RRT_STATS=1 srun --mpi=pmix -n 4 $top_builddir/tests/coll/coll_check"
if grep -qxF -- "$want" "$out"; then
  echo "PASS: rrun --dry-run inside an allocation prints: $want"
else
  echo "FAIL: rrun --dry-run inside an allocation, want '$want', got:"; sed 's/^/    /' "$out"
  fail=1
fi
out=$t/salloc.out
timeout -k 5 90 $salloc_cmd "$top_builddir/rrun" -n 4 -x RRT_STATS=1 \
  "$top_builddir/tests/coll/coll_check" >"$out" 2>&1 </dev/null
rc=$?
if [ $rc -ne 0 ] || ! grep -q '^PASS coll_check (4 ranks)' "$out"; then
  echo "FAIL: salloc ... rrun -n 4 coll_check (exit $rc)"; sed 's/^/    /' "$out" | tail -40
  fail=1
else
  python3 "$MH_DIR/mh_stats.py" "$out" "$MH_ADDR_A" "$MH_ADDR_B" "rrun in salloc" || fail=1
fi

# The Slurm daemons stay in the namespaces until the teardown: anything else is a leftover.
left=$(for n in "$MH_A" "$MH_B"; do ip netns pids "$n"; done | while read -r p; do
  case $(cat "/proc/$p/comm" 2>/dev/null) in slurmctld|slurmscriptd|slurmd|slurmstepd) ;; *) echo "$p" ;; esac
done)
if [ -n "$left" ]; then
  echo "FAIL: processes left inside the namespace hosts:"; ps -o pid,args -p $left; fail=1
fi
[ $fail -eq 0 ] && echo "PASS: mh_slurm"
exit $fail
