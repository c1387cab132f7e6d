#!/bin/bash
# make check entry: over TCP, a rank vanishes while the others wait on it; the others'
# receive and rendezvous send must fail with RRT_ERR_PROC_FAILED within seconds (no hang).
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
out=$(mktemp "${TMPDIR:-/tmp}/rrt-peerexit.XXXXXX") || exit 2
trap 'rm -f "$out"' EXIT
start=$SECONDS
RRT_TRANSPORTS=tcp timeout -k 5 60 "$top_builddir/rrun" -n 3 --timeout 40 \
  "$top_builddir/tests/mp/p2p_tcp_peer_exit" >"$out" 2>&1 </dev/null
secs=$((SECONDS - start))
cat "$out"
grep -q '^FAIL' "$out" && { echo "FAIL: a survivor did not see RRT_ERR_PROC_FAILED"; exit 1; }
grep -q '^PASS p2p_tcp_peer_exit (3 ranks)' "$out" || { echo "FAIL: no PASS line"; exit 1; }
[ $secs -lt 30 ] || { echo "FAIL: took ${secs}s"; exit 1; }
echo "PASS: tcp_peer_exit (${secs}s)"
