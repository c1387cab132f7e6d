#!/bin/bash
# rrun: stdin reaches rank 0 only; stdout/stderr forwarded by whole lines; --tag-output; partial
# last lines are not lost.
set -u
. "$(dirname "$0")/lib.sh"

printf 'line one\nline two\n' | timeout 30 "$RRUN" -n 3 "$PROBE" --echo-stdin "$TOKEN" >"$WORK/out" 2>"$WORK/err"
RC=$?
expect_rc "stdin job" 0
[ "$(grep -c '^stdin: ' "$WORK/out")" = 2 ] && pass "stdin read once (rank 0)" || fail "stdin lines: $(cat "$WORK/out")"
expect_grep "stdin line 2" "^stdin: line two\$" "$WORK/out"

# A rank that never reads stdin does not block the job, even with a lot of input.
head -c 1000000 /dev/zero | timeout 30 "$RRUN" -n 2 "$PROBE" "$TOKEN" >"$WORK/out" 2>"$WORK/err"
RC=$?
expect_rc "unread stdin" 0

run_rrun "$WORK/out" "$WORK/err" -n 2 --tag-output "$PROBE" --print hello --stderr oops --partial tail "$TOKEN"
expect_rc "tagged job" 0
for r in 0 1; do
  expect_grep "tagged stdout $r" "^\[$r\] rank $r: hello\$" "$WORK/out"
  expect_grep "tagged stderr $r" "^\[$r\] rank $r: oops\$" "$WORK/err"
  expect_grep "tagged partial line $r" "^\[$r\] tail\$" "$WORK/out"
done
expect_no_grep "stderr kept apart" "oops" "$WORK/out"

# Untagged: lines stay whole across 8 ranks writing concurrently.
run_rrun "$WORK/out" "$WORK/err" -n 8 sh -c 'for i in $(seq 200); do echo "r$PMIX_RANK-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-$i"; done'
expect_rc "8 writers" 0
bad=$(grep -cvE '^r[0-7]-x{40}-[0-9]+$' "$WORK/out")
[ "$(wc -l <"$WORK/out")" = 1600 ] && [ "$bad" = 0 ] && pass "1600 whole lines" || fail "lines $(wc -l <"$WORK/out"), bad $bad"

# Untagged partial last line is forwarded as is.
run_rrun "$WORK/out" "$WORK/err" -n 1 "$PROBE" --partial "no-newline" "$TOKEN"
[ "$(cat "$WORK/out")" = "no-newline" ] && pass "partial line kept" || fail "partial line: '$(cat "$WORK/out")'"
finish
