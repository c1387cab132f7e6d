#!/bin/bash
# make check entry: over TCP, a rank vanishes while the others wait on it.
#  1. The program set RRT_ERRORS_RETURN on RRT_COMM_WORLD: the others' receive and rendezvous
#     send must fail with RRT_ERR_PROC_FAILED within seconds (no hang).
#  2. --abort (no handler chosen, RRT_PEER_FAILURE=auto): the first survivor to find the peer
#     gone tells rrun to abort the job: rrun exits 14 (RRT_ERR_PROC_FAILED) within seconds, the
#     reason names the dead rank, and no survivor returned from its calls.
# A hang shows as rrun's --timeout (no PASS line, or not status 14); the time taken is printed,
# never judged (timings on a loaded 2-core machine prove nothing).
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
echo "PASS: tcp_peer_exit, errors returned (${secs}s)"

start=$SECONDS
RRT_TRANSPORTS=tcp timeout -k 5 60 "$top_builddir/rrun" -n 3 --timeout 40 \
  "$top_builddir/tests/mp/p2p_tcp_peer_exit" --abort >"$out" 2>&1 </dev/null
rc=$?
secs=$((SECONDS - start))
cat "$out"
[ $rc -eq 14 ] || { echo "FAIL: rrun exited $rc, want 14 (a survivor aborted the job)"; exit 1; }
grep -q 'peer rank 2 (node 0) failed: .*aborting the job' "$out" ||
  { echo "FAIL: no 'aborting the job' reason naming rank 2"; exit 1; }
grep -q '^SURVIVED' "$out" && { echo "FAIL: a survivor carried on instead of aborting"; exit 1; }
echo "PASS: tcp_peer_exit, job aborted (${secs}s)"
