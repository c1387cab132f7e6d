#!/bin/sh
# make check entry: a rank blocked in rrt_recv over verbs (the only transport besides self) past
# its spin budget (RRT_SPIN_COUNT=16, what an oversubscribed node gets) sleeps in the kernel on
# the verbs completion channel: rank 1's RRT_STATS "waits:" line must show sleeps on verbs. How
# many of them an event ended is printed, not judged: whether the peer's SEND lands while rank 1
# is asleep or between two sleeps is the scheduler's choice (one CI run saw 246 sleeps, none
# ended by the event, under the load of the parallel suite). That a SEND wakes a sleeper is
# proven deterministically by verbs_test CompletionChannelWakesASleeper. With
# RRT_IB_COMP_CHANNEL=off the same wait has no event fd and never sleeps in the kernel. The CPU
# time of each wait is printed (INFO) but not judged: this machine's load decides it.
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_srcdir=${top_srcdir:-$top_builddir}
. "$top_srcdir/tests/softrdma/env.sh" || { echo "FAIL: the software RDMA device is not built (make softrdma)"; exit 99; }
prog="$top_builddir/tests/mp/p2p_wait_sleep"
[ -x "$prog" ] || { echo "FAIL: $prog is not built"; exit 99; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail=0

run() {  # run LABEL ENV...
  label=$1; shift
  env "$@" RRT_TRANSPORTS=verbs RRT_STATS=1 RRT_SPIN_COUNT=16 \
    "$top_builddir/rrun" -n 2 --timeout 60 "$prog" >"$out" 2>&1
  rc=$?
  grep -E '^INFO|stats: waits' "$out" | sed "s/^/$label: /"
  if [ $rc -ne 0 ] || ! grep -q '^PASS p2p_wait_sleep' "$out"; then
    echo "FAIL: $label: exit $rc"; cat "$out"; fail=1; return 1
  fi
  waits=$(grep '^\[rrt 1\] stats: waits:' "$out")
  [ -n "$waits" ] || { echo "FAIL: $label: no waits line from rank 1"; cat "$out"; fail=1; return 1; }
  sleeps=$(echo "$waits" | sed -n 's/.*waits: \([0-9]*\) kernel sleeps (\([0-9]*\) woken by events) on \([a-z ]*\),.*/\1 \2 \3/p')
  set -- $sleeps
  echo "$label: sleeps=$1 woken=$2 fd=$3"
  return 0
}

if run channel; then
  case "$sleeps" in
    *" verbs") ;;
    *) echo "FAIL: channel: rank 1 did not sleep on the verbs event fd ($sleeps)"; fail=1 ;;
  esac
  set -- $sleeps
  [ "${1:-0}" -ge 1 ] ||
    { echo "FAIL: channel: $1 kernel sleeps on the completion channel: want >= 1"; fail=1; }
fi
if run nochannel RRT_IB_COMP_CHANNEL=off; then
  set -- $sleeps
  [ "${1:-1}" -eq 0 ] ||
    { echo "FAIL: nochannel: $1 kernel sleeps without a completion channel"; fail=1; }
fi
[ $fail -eq 0 ] && echo "PASS verbs_wait"
exit $fail
