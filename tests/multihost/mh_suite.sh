#!/bin/bash
# make check entry (root): a 4-rank job over two hosts made of network namespaces (netns.sh),
# 2 ranks per host, started by Open MPI's mpirun (openmpi-bin). Runs
#   1. tests/multihost/testlist: the point-to-point and collective checks across the hosts;
#   2. coll_check once more with RRT_STATS=1, and proves from every rank's per-peer counters
#      that each pair on one host sent over shm and each pair across the hosts over a TCP
#      connection between the two namespaces' addresses (never loopback), every pair in both
#      directions;
#   3. coll_check with RRT_TCP_IF=fd72:7274::/64: the same over IPv6 (the hosts' ULAs);
# and that nothing is left running inside the namespaces afterwards.
# Skips (77) without root, ip netns, unshare or mpirun.openmpi.
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_srcdir=${top_srcdir:-$top_builddir}
. "$top_srcdir/tests/multihost/netns.sh"
mh_require

t=$(mktemp -d "${TMPDIR:-/tmp}/rrt-mh.XXXXXX") || exit 2
trap 'mh_teardown; rm -rf "$t"' EXIT
mh_setup || { echo "FAIL: could not build the namespace hosts"; exit 1; }

# run_testlist.sh finds programs under $top_builddir/tests/mp: a scratch tree of links.
mkdir -p "$t/tests/mp"
for p in p2p_sizes p2p_anysource p2p_nonblocking p2p_ssend p2p_order p2p_comm p2p_probe \
         p2p_sendrecv p2p_datatype p2p_anytag_internal; do
  ln -s "$top_builddir/tests/mp/$p" "$t/tests/mp/$p"
done
ln -s "$top_builddir/tests/coll/coll_check" "$t/tests/mp/coll_check"

fail=0
MP_LAUNCHER=ompi MP_OMPI="$MH_DIR/ns_mpirun.sh $MH_A $MH_B" MP_TIMEOUT=60 top_builddir=$t \
  "$top_srcdir/tests/mp/run_testlist.sh" "$top_srcdir/tests/multihost/testlist" || fail=1

# 2, 3. Who sent what over which wire: stats_check LABEL ADDR_A ADDR_B [VAR=VALUE...]
stats_check() {
  local label=$1 aa=$2 ab=$3 out=$t/stats.$1.out rc
  shift 3
  local -a xs=()
  local e
  for e in "$@"; do xs+=(-x "$e"); done
  timeout -k 5 90 env "$@" "$MH_DIR/ns_mpirun.sh" "$MH_A" "$MH_B" -n 4 -x RRT_STATS=1 "${xs[@]}" \
    "$top_builddir/tests/coll/coll_check" >"$out" 2>&1 </dev/null
  rc=$?
  if [ $rc -ne 0 ] || ! grep -q '^PASS coll_check (4 ranks)' "$out"; then
    echo "FAIL: [$label] coll_check with RRT_STATS=1 (exit $rc)"; sed 's/^/    /' "$out" | tail -40
    return 1
  fi
  python3 "$MH_DIR/mh_stats.py" "$out" "$aa" "$ab" "$label"
}
stats_check ipv4 "$MH_ADDR_A" "$MH_ADDR_B" || fail=1
stats_check ipv6 "$MH_ADDR6_A" "$MH_ADDR6_B" RRT_TCP_IF=fd72:7274::/64 || fail=1

left=$(mh_pids)
if [ -n "$left" ]; then
  echo "FAIL: processes left inside the namespace hosts:"; ps -o pid,args -p $left; fail=1
fi
[ $fail -eq 0 ] && echo "PASS: mh_suite"
exit $fail
