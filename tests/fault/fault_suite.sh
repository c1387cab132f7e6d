#!/bin/bash
# The fault suite: rrt jobs that end badly, through rrun. For each way (a rank is kill -9ed in
# the middle of a rendezvous, dies while others send to it, segfaults, calls rrt_abort, exits
# non-zero; rrun is kill -9ed or gets SIGINT; the job times out) it checks:
#   - rrun's exit status is the documented one (README: 128+N, the abort code, the exit code,
#     124 for --timeout);
#   - stderr has the one-line reason naming the failing rank;
#   - every rank is gone within 2 s of the end (fault_app ranks carry a token pgrep finds);
#   - nothing of the job is left in /dev/shm;
#   - where a survivor ignores SIGTERM to look, its calls to the dead peer returned
#     RRT_ERR_PROC_FAILED (communicators with RRT_ERRORS_RETURN).
set -u
: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
RRUN="$top_builddir/rrun"
APP="$top_builddir/tests/fault/fault_app"
for f in "$RRUN" "$APP"; do [ -x "$f" ] || { echo "FAIL: $f is not built"; exit 1; }; done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rrt-fault.XXXXXX")
TOKEN="ftok$$x$RANDOM"
FAILED=0
trap 'pkill -KILL -f "^$APP .*$TOKEN" 2>/dev/null; rm -rf "$WORK"' EXIT
pass() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; FAILED=1; }
now_ms() { date +%s%3N; }

our_ranks() {
  local pid
  for pid in $(pgrep -f "^$APP .*$TOKEN"); do
    [ "$(ps -o stat= -p "$pid" 2>/dev/null | cut -c1)" = Z ] || echo "$pid"
  done
}
# after WHAT: the ranks are gone within 2 s and /dev/shm has nothing of the job.
after() {
  local deadline=$(( $(now_ms) + 2000 ))
  while [ -n "$(our_ranks)" ] && [ "$(now_ms)" -lt "$deadline" ]; do sleep 0.05; done
  [ -z "$(our_ranks)" ] && pass "$1: no rank left" || fail "$1: ranks alive 2 s after the end: $(our_ranks | tr '\n' ' ')"
  local job
  job=$(sed -n 's/^rank [0-9]*: job \(.*\)$/\1/p' "$WORK/out" | head -1)
  if [ -z "$job" ]; then fail "$1: no rank reported its job"; return; fi
  local left
  left=$(ls /dev/shm 2>/dev/null | grep -F "rrt-$job" || true)
  [ -z "$left" ] && pass "$1: /dev/shm clean" || fail "$1: left in /dev/shm: $left"
}
expect_rc() { [ "$RC" = "$2" ] && pass "$1: exit $RC" || fail "$1: exit $RC, want $2"; }
expect_line() {  # WHAT REGEX FILE
  if grep -Eq -- "$2" "$3"; then pass "$1"; else fail "$1: no line matching '$2':"; sed 's/^/  | /' "$WORK/out" "$WORK/err" | tail -20; fi
}
run() {  # run NPROCS MODE [rrun options...]: foreground, bounded; sets RC, MS
  local np=$1 mode=$2
  shift 2
  rm -rf "$WORK/pids"; mkdir -p "$WORK/pids"
  local t0; t0=$(now_ms)
  timeout -k 2 60 "$RRUN" -n "$np" "$@" "$APP" "$mode" "$WORK/pids" "$TOKEN" >"$WORK/out" 2>"$WORK/err" </dev/null
  RC=$?
  MS=$(( $(now_ms) - t0 ))
}

# A rank is kill -9ed after sending the RTS of a 32 MiB rendezvous; the receiver's RGET (CMA)
# finds it gone.
run 3 die-in-rndv
expect_rc "killed mid-rendezvous" 137
expect_line "killed mid-rendezvous: reason names rank 1" '^rrun: rank 1 \(pid [0-9]+\) killed by signal 9' "$WORK/err"
expect_line "killed mid-rendezvous: the receive returned an error" '^rank 0: recv from dead rank 1 returned .*(fail|dead|gone)' "$WORK/out"
after "killed mid-rendezvous"

# A rank dies; a survivor keeps sending to it until the ring is full and the transport finds
# the peer gone; the next send fails at once.
run 2 send-to-dead
expect_rc "send to a dead rank" 137
expect_line "send to a dead rank: error returned" '^rank 0: send to dead rank 1 returned .*(fail|dead|gone)' "$WORK/out"
expect_line "send to a dead rank: next call fails at once" '^rank 0: next send to dead rank 1 returned .*(fail|dead|gone)' "$WORK/out"
after "send to a dead rank"

# A rank dies; a survivor waits to receive from it: nothing ever comes, and the wait finds the
# peer gone (the shm transport looks at one peer every 10 ms of idle waiting).
run 2 recv-from-dead
expect_rc "receive from a dead rank" 137
expect_line "receive from a dead rank: error returned" '^rank 0: recv from dead rank 1 returned .*(fail|dead|gone)' "$WORK/out"
expect_line "receive from a dead rank: next call fails at once" '^rank 0: next recv from dead rank 1 returned .*(fail|dead|gone)' "$WORK/out"
after "receive from a dead rank"

# The same through blocking collectives at 2 ranks (their direct forms, runtime/coll/direct.h):
# the bcast's sends fail like the sends above; the allreduce and barrier after it fail at once.
run 2 coll-to-dead
expect_rc "collectives with a dead rank" 137
expect_line "collectives with a dead rank: bcast error" '^rank 0: bcast to dead rank 1 returned .*(fail|dead|gone)' "$WORK/out"
expect_line "collectives with a dead rank: allreduce error" '^rank 0: allreduce with dead rank 1 returned .*(fail|dead|gone)' "$WORK/out"
expect_line "collectives with a dead rank: barrier error" '^rank 0: barrier with dead rank 1 returned .*(fail|dead|gone)' "$WORK/out"
after "collectives with a dead rank"

# A rank dies while the other waits in the shared-memory allreduce (on its counters, with no
# message in flight): the wait notices within its liveness period and returns the error.
run 2 shm-allreduce-to-dead
expect_rc "shared-memory allreduce with a dead rank" 137
expect_line "shared-memory allreduce with a dead rank: error" '^rank 0: shm allreduce with dead rank 1 returned .*(fail|dead|gone)' "$WORK/out"
after "shared-memory allreduce with a dead rank"

# (In a sanitizer build the rank must really die of SIGSEGV, not have ASan report and exit 1.)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0" run 4 segv
expect_rc "segfault" 139
expect_line "segfault: reason" '^rrun: rank 1 \(pid [0-9]+\) killed by signal 11' "$WORK/err"
after "segfault"

run 3 abort
expect_rc "rrt_abort(7)" 7
expect_line "rrt_abort: reason names rank 1" 'rank 1' "$WORK/err"
after "rrt_abort"

run 3 exit3
expect_rc "rank exits 3" 3
expect_line "exit 3: reason names rank 1" '^rrun: rank 1 .*(exit|status).*3' "$WORK/err"
after "exit 3"

# The ranks must have started (printed their job) before the timeout: 6 s leaves room for a
# sanitizer build on a loaded machine.
run 2 hang --timeout 6
expect_rc "timeout" 124
expect_line "timeout: reason" 'timeout' "$WORK/err"
after "timeout"

# SIGINT to rrun while every rank blocks in a receive: rrun exits 130, ranks gone.
rm -rf "$WORK/pids"; mkdir -p "$WORK/pids"
"$RRUN" -n 3 "$APP" hang "$WORK/pids" "$TOKEN" >"$WORK/out" 2>"$WORK/err" </dev/null &
bg=$!
deadline=$(( $(now_ms) + 20000 ))
until [ "$(grep -c waiting "$WORK/out" 2>/dev/null)" = 3 ] || [ "$(now_ms)" -gt "$deadline" ]; do sleep 0.05; done
kill -INT "$bg"
wait "$bg"; RC=$?
expect_rc "SIGINT to rrun" 130
after "SIGINT to rrun"

# kill -9 of rrun while every rank blocks in a receive: the ranks notice their launcher is gone
# (PR_SET_PDEATHSIG from rrun's guard) and the guard removes the job's files.
rm -rf "$WORK/pids"; mkdir -p "$WORK/pids"
"$RRUN" -n 3 "$APP" hang "$WORK/pids" "$TOKEN" >"$WORK/out" 2>"$WORK/err" </dev/null &
bg=$!
deadline=$(( $(now_ms) + 20000 ))
until [ "$(grep -c waiting "$WORK/out" 2>/dev/null)" = 3 ] || [ "$(now_ms)" -gt "$deadline" ]; do sleep 0.05; done
kill -KILL "$bg"
wait "$bg" 2>/dev/null
after "kill -9 of rrun"

[ "$FAILED" = 0 ] && { echo "all passed"; exit 0; }
exit 1
