#!/bin/bash
# In the Soft-RoCE guest (guest_init.sh, with the rdmacm list): strangers send rdma_cm connection
# requests to the listeners of a running 2-rank job over verbs with RRT_VERBS_CM=rdmacm — private
# data that is not rrt's, and rrt's private data with another job's hash. Passes when every
# request is refused (the stranger sees REJECTED), each is logged by the rank it reached, and the
# job, whose ranks kept exchanging checked data meanwhile, ends with that data intact.
set -u
b=${top_builddir:-/rrt}
t=$(mktemp -d "${TMPDIR:-/tmp}/rrt-cmauth.XXXXXX") || exit 2
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$t"' EXIT
RRT_TRANSPORTS=verbs RRT_VERBS_CM=rdmacm RRT_LOG=info "$b/rrun" -n 2 --timeout 80 \
  "$b/tests/mp/p2p_tcp_guard" --go="$t/go" >"$t/out" 2>&1 </dev/null &
pid=$!
for _ in $(seq 600); do
  [ "$(grep -c 'rdma_cm listening on' "$t/out")" -ge 2 ] && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.1
done
eps=$(sed -n 's/.*rdma_cm listening on \([0-9.]*\):\([0-9]*\) .*/\1:\2/p' "$t/out")
if [ "$(echo "$eps" | grep -c .)" != 2 ]; then
  echo "FAIL: the ranks did not report two rdma_cm listeners"; cat "$t/out"; exit 1
fi
fail=0
for ep in $eps; do
  for mode in garbage wrongjob; do
    "$b/tests/softroce/cm_stranger" "${ep%:*}" "${ep#*:}" $mode
    rc=$?
    [ $rc -eq 0 ] || { echo "FAIL: $mode request to $ep: cm_stranger exit $rc (0 = refused)"; fail=1; }
  done
done
for _ in $(seq 600); do
  [ "$(grep -c 'rejected an rdma_cm connection' "$t/out")" -ge 4 ] && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.1
done
touch "$t/go"
wait $pid
rc=$?
pid=
cat "$t/out"
[ $rc -eq 0 ] || { echo "FAIL: the job exited $rc"; fail=1; }
grep -q '^PASS p2p_tcp_guard (2 ranks)' "$t/out" || { echo "FAIL: no PASS line"; fail=1; }
g=$(grep -c 'rejected an rdma_cm connection.*not an rrt connection' "$t/out")
j=$(grep -c 'rejected an rdma_cm connection.*wrong job' "$t/out")
[ "$g" -eq 2 ] || { echo "FAIL: want 2 garbage rejections, got $g"; fail=1; }
[ "$j" -eq 2 ] || { echo "FAIL: want 2 wrong-job rejections, got $j"; fail=1; }
[ $fail -eq 0 ] && echo "PASS: rdmacm_auth (4 stranger requests refused and logged, data intact)"
exit $fail
