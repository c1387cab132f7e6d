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
  python3 - "$out" "$aa" "$ab" "$label" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
label = sys.argv[4]
addr = {0: sys.argv[2], 1: sys.argv[2], 2: sys.argv[3], 3: sys.argv[3]}  # by-slot: 0,1 on A
host = {0: 'A', 1: 'A', 2: 'B', 3: 'B'}
node = dict((int(r), int(n)) for r, n in re.findall(r'\[rrt (\d+)\] stats: node (\d+) sent', text))
lines = re.findall(r'\[rrt (\d+)\] stats: to (\d+) node (\d+) (\w+)(?: (\S+))? (\d+) msgs (\d+) bytes', text)
bad = []
if sorted(node) != [0, 1, 2, 3]:
    bad.append('summary lines from ranks %s, want 0-3' % sorted(node))
elif not (node[0] == node[1] != node[2] == node[3]):
    bad.append('PMIx node ids %s: want ranks 0,1 on one node and 2,3 on another' % node)
seen = {}
for r, p, n, tx, route, msgs, nbytes in lines:
    r, p = int(r), int(p)
    seen[(r, p)] = (tx, route, int(msgs), int(nbytes))
    if host[r] == host[p]:
        if tx != 'shm':
            bad.append('rank %d -> %d (same host) went over %s' % (r, p, tx))
        continue
    m = re.fullmatch(r'\[?([0-9a-f.:]+?)\]?:\d+->\[?([0-9a-f.:]+?)\]?:\d+', route or '')
    if tx != 'tcp' or not m:
        bad.append('rank %d -> %d (other host) went over %s %s' % (r, p, tx, route))
    elif m.group(1) != addr[r] or m.group(2) != addr[p]:
        bad.append('rank %d -> %d: connection %s, want %s -> %s' % (r, p, route, addr[r], addr[p]))
for r in range(4):
    for p in range(4):
        if r != p and (r, p) not in seen:
            bad.append('no traffic counted from rank %d to rank %d' % (r, p))
for b in bad:
    print('FAIL: [%s] %s' % (label, b))
if bad:
    sys.exit(1)
for (r, p), (tx, route, msgs, nbytes) in sorted(seen.items()):
    print('    rank %d -> %d: %s %s %d msgs %d bytes' % (r, p, tx, route or '', msgs, nbytes))
print('PASS: [%s] same-host pairs over shm, cross-host pairs over TCP between %s and %s'
      % (label, sys.argv[2], sys.argv[3]))
PY
}
stats_check ipv4 "$MH_ADDR_A" "$MH_ADDR_B" || fail=1
stats_check ipv6 "$MH_ADDR6_A" "$MH_ADDR6_B" RRT_TCP_IF=fd72:7274::/64 || fail=1

left=$(mh_pids)
if [ -n "$left" ]; then
  echo "FAIL: processes left inside the namespace hosts:"; ps -o pid,args -p $left; fail=1
fi
[ $fail -eq 0 ] && echo "PASS: mh_suite"
exit $fail
