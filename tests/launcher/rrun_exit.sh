#!/bin/bash
# rrun: exit codes and the one-line report when a rank fails, aborts or is killed; the other
# ranks are killed within 2 s (they would sleep 60 s otherwise).
# Lines are matched anywhere in stderr, not only at its start: under load, OpenPMIx may print a
# line of its own without a newline before rrun's. "One report" counts the rank reports only: a
# loaded machine may add rrun's "PMIx server shutdown timed out" warning (CI, stop 24). The time bound
# only tells "killed" from "slept its 60 s", whatever the load.
set -u
. "$(dirname "$0")/lib.sh"

# A rank exits 3: rrun exits 3 and names the rank; the sleeping others are killed quickly.
run_rrun "$WORK/out" "$WORK/err" -n 4 "$PROBE" --exit 2:3 --sleep 60 "$TOKEN"
expect_rc "rank exits 3" 3
expect_grep "exit report" "rrun: rank 2 \(pid [0-9]+\) exited with status 3\$" "$WORK/err"
[ "$(grep -o "rrun: rank " "$WORK/err" | wc -l)" = 1 ] && pass "one report line" || fail "report lines: $(cat "$WORK/err")"
[ "$ELAPSED_MS" -lt 30000 ] && pass "others killed (${ELAPSED_MS} ms)" || fail "took ${ELAPSED_MS} ms"
wait_no_ranks "after exit 3" 5

# Killed by SIGKILL: 128+9.
run_rrun "$WORK/out" "$WORK/err" -n 3 "$PROBE" --signal 1:9 --sleep 60 "$TOKEN"
expect_rc "rank killed by SIGKILL" 137
expect_grep "SIGKILL report" "rrun: rank 1 \(pid [0-9]+\) killed by signal 9 \(Killed\)\$" "$WORK/err"
[ "$ELAPSED_MS" -lt 30000 ] && pass "others killed (${ELAPSED_MS} ms)" || fail "took ${ELAPSED_MS} ms"
wait_no_ranks "after SIGKILL" 5

# Segmentation fault: 128+11.
run_rrun "$WORK/out" "$WORK/err" -n 2 "$PROBE" --segv 0 --sleep 60 "$TOKEN"
expect_rc "rank segfaults" 139
expect_grep "SIGSEGV report" "rrun: rank 0 \(pid [0-9]+\) killed by signal 11 \(Segmentation fault\)" "$WORK/err"
wait_no_ranks "after SIGSEGV" 5

# PMIx_Abort(7): exit 7, the report names the rank, the others are killed within 2 s (they
# ignore SIGTERM, so this needs the SIGKILL escalation).
run_rrun "$WORK/out" "$WORK/err" -n 4 "$PROBE" --ignore-term --abort 3:7 --sleep 60 "$TOKEN"
expect_rc "abort" 7
expect_grep "abort report" "rrun: rank 3 \(pid [0-9]+\) called abort with status 7: probe asked to abort\$" "$WORK/err"
[ "$ELAPSED_MS" -lt 30000 ] && pass "abort: others killed (${ELAPSED_MS} ms)" || fail "abort took ${ELAPSED_MS} ms"
wait_no_ranks "after abort" 5

# Every rank fails at once: still exactly one report, and the code of one of them.
run_rrun "$WORK/out" "$WORK/err" -n 4 "$PROBE" --exit -1:5 "$TOKEN"
expect_rc "all ranks exit 5" 5
[ "$(grep -o "rrun: rank " "$WORK/err" | wc -l)" = 1 ] && pass "one report line" || fail "reports: $(cat "$WORK/err")"

# An exit without PMIx_Finalize after connecting, status 0: a warning only.
run_rrun "$WORK/out" "$WORK/err" -n 2 "$PROBE" --no-finalize "$TOKEN"
expect_rc "no finalize" 0
expect_grep "no-finalize warning" "rrun: warning: rank [01] \(pid [0-9]+\) exited with status 0 without finalizing PMIx\$" "$WORK/err"

# A finalize that rrun reads late: PMIx 4.2.2's client stops waiting for the server's answer
# after 2 s and exits 0, and a starved rrun reads the finalize after the exit (CI, 8 ranks on a
# loaded machine). Not a warning. rrun is stopped from when the 4 ranks are up until all exited.
mkdir -p "$WORK/pids"
"$RRUN" -n 4 "$PROBE" --pidfile "$WORK/pids" --sleep 1 "$TOKEN" >"$WORK/out" 2>"$WORK/err" </dev/null &
rp=$!
for r in 0 1 2 3; do wait_for_file "$WORK/pids/rank.$r.pid" 20; done
kill -STOP "$rp"
wait_no_ranks "late finalize: ranks exited while rrun stopped" 20
kill -CONT "$rp"
for _ in $(seq 300); do kill -0 "$rp" 2>/dev/null || break; sleep 0.1; done
kill -9 "$rp" 2>/dev/null && fail "late finalize: rrun still running after 30 s"
wait "$rp"; RC=$?
expect_rc "late finalize" 0
expect_no_grep "late finalize: no warning" "without finalizing" "$WORK/err"

# --timeout: killed, reported, exit 124.
run_rrun "$WORK/out" "$WORK/err" -n 2 --timeout 1 "$PROBE" --sleep 60 "$TOKEN"
expect_rc "timeout" 124
expect_grep "timeout report" "rrun: timeout: the job ran longer than 1 s" "$WORK/err"
[ "$ELAPSED_MS" -lt 6000 ] && pass "timeout honoured (${ELAPSED_MS} ms)" || fail "timeout took ${ELAPSED_MS} ms"
wait_no_ranks "after timeout" 5

# A job that ends before its timeout is unaffected.
run_rrun "$WORK/out" "$WORK/err" -n 2 --timeout 20 "$PROBE" "$TOKEN"
expect_rc "timeout not reached" 0
finish
