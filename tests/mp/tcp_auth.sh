#!/bin/bash
# make check entry: strangers connect to the TCP ports of a running 2-rank job and write
# garbage or a Hello with a wrong secret. Passes when every stranger connection is rejected
# and logged by the rank it reached, and the job still ends with its checked data intact.
set -u
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
b=$top_builddir/tests/mp
t=$(mktemp -d "${TMPDIR:-/tmp}/rrt-tcpauth.XXXXXX") || exit 2
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$t"' EXIT
RRT_TRANSPORTS=tcp RRT_LOG=info "$top_builddir/rrun" -n 2 --timeout 90 \
  "$b/p2p_tcp_guard" --go="$t/go" >"$t/out" 2>&1 </dev/null &
pid=$!
for _ in $(seq 600); do
  [ "$(grep -c 'tcp: listening on' "$t/out")" -ge 2 ] && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.1
done
ports=$(sed -n 's/.*tcp: listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$t/out")
if [ "$(echo "$ports" | grep -c .)" != 2 ]; then
  echo "FAIL: the ranks did not report two loopback TCP ports"; cat "$t/out"; exit 1
fi
for p in $ports; do
  "$b/tcp_stranger" 127.0.0.1 "$p" garbage || { echo "FAIL: stranger could not connect to $p"; exit 1; }
  "$b/tcp_stranger" 127.0.0.1 "$p" badsecret || { echo "FAIL: stranger could not connect to $p"; exit 1; }
done
# Wait until both ranks logged both rejections, then let the job finish.
for _ in $(seq 600); do
  [ "$(grep -c 'rejected a connection' "$t/out")" -ge 4 ] && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.1
done
touch "$t/go"
wait $pid
rc=$?
pid=
cat "$t/out"
fail=0
[ $rc -eq 0 ] || { echo "FAIL: the job exited $rc"; fail=1; }
grep -q '^PASS p2p_tcp_guard (2 ranks)' "$t/out" || { echo "FAIL: no PASS line"; fail=1; }
g=$(grep -c 'rejected a connection.*not an rrt connection' "$t/out")
s=$(grep -c 'rejected a connection.*wrong job secret' "$t/out")
[ "$g" -eq 2 ] || { echo "FAIL: want 2 garbage rejections, got $g"; fail=1; }
[ "$s" -eq 2 ] || { echo "FAIL: want 2 wrong-secret rejections, got $s"; fail=1; }
[ $fail -eq 0 ] && echo "PASS: tcp_auth (4 stranger connections rejected, data intact)"
exit $fail
