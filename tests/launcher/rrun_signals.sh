#!/bin/bash
# rrun: signals to rrun reach the ranks; killing rrun (even with SIGKILL) leaves no rank behind.
set -u
. "$(dirname "$0")/lib.sh"

start_bg() {  # start_bg args...: rrun in the background, sets BG
  "$RRUN" "$@" >"$WORK/out" 2>"$WORK/err" </dev/null &
  BG=$!
}
wait_pids() {  # wait until N pid files exist
  local i
  for ((i = 0; i < $1; i++)); do
    wait_for_file "$WORK/pids/rank.$i.pid" 10 || { fail "rank $i never started"; return 1; }
  done
}
# bounded wait for BG; sets RC (124 if it did not end within $1 s)
wait_bg() {
  local deadline=$(( $(now_ms) + $1 * 1000 ))
  while kill -0 "$BG" 2>/dev/null; do
    if [ "$(now_ms)" -gt "$deadline" ]; then kill -9 "$BG"; wait "$BG"; RC=124; return; fi
    sleep 0.05
  done
  wait "$BG"
  RC=$?
}

# SIGINT to rrun: every rank gets it (they trap it and say so), rrun exits 130.
mkdir -p "$WORK/pids"
start_bg -n 3 "$PROBE" --trap-int --pidfile "$WORK/pids" --sleep 60 "$TOKEN"
wait_pids 3
kill -INT "$BG"
wait_bg 10
expect_rc "SIGINT" 130
for r in 0 1 2; do expect_grep "rank $r got SIGINT" "^rank $r got SIGINT\$" "$WORK/out"; done
expect_grep "signal report" "^rrun: got signal 2" "$WORK/err"
wait_no_ranks "after SIGINT" 5

# SIGTERM to rrun: ranks die of it, rrun exits 143.
rm -rf "$WORK/pids"; mkdir -p "$WORK/pids"
start_bg -n 2 "$PROBE" --pidfile "$WORK/pids" --sleep 60 "$TOKEN"
wait_pids 2
kill -TERM "$BG"
wait_bg 10
expect_rc "SIGTERM" 143
wait_no_ranks "after SIGTERM" 5

# SIGKILL to rrun: PR_SET_PDEATHSIG takes the ranks down (they even ignore SIGTERM).
rm -rf "$WORK/pids"; mkdir -p "$WORK/pids"
start_bg -n 4 "$PROBE" --ignore-term --pidfile "$WORK/pids" --sleep 60 "$TOKEN"
wait_pids 4
[ "$(our_ranks | wc -l)" = 4 ] && pass "4 ranks running" || fail "ranks running: $(our_ranks | wc -l)"
kill -KILL "$BG"
wait "$BG" 2>/dev/null
wait_no_ranks "after SIGKILL of rrun" 2

# SIGKILL of one rank from outside: reported as killed by signal 9, exit 137, others killed.
rm -rf "$WORK/pids"; mkdir -p "$WORK/pids"
start_bg -n 3 "$PROBE" --pidfile "$WORK/pids" --sleep 60 "$TOKEN"
wait_pids 3
kill -KILL "$(cat "$WORK/pids/rank.1.pid")"
wait_bg 10
expect_rc "rank 1 killed from outside" 137
expect_grep "report" "^rrun: rank 1 \(pid [0-9]+\) killed by signal 9 \(Killed\)\$" "$WORK/err"
wait_no_ranks "after kill of rank 1" 5
finish
