#!/bin/bash
# rrun: bad command lines give a usage message and exit 2 at once; --help and --version work.
set -u
. "$(dirname "$0")/lib.sh"

bad() {  # bad WHAT PATTERN args...
  local what=$1 pattern=$2
  shift 2
  run_rrun "$WORK/out" "$WORK/err" "$@"
  expect_rc "$what" 2
  expect_grep "$what: message" "$pattern" "$WORK/err"
  expect_grep "$what: usage" "^Usage: rrun" "$WORK/err"
  [ "$ELAPSED_MS" -lt 5000 ] && pass "$what: quick" || fail "$what: took ${ELAPSED_MS} ms"
}

bad "no arguments" "missing -n"
bad "-n missing" "missing -n" "$PROBE"
bad "-n 0" "invalid number of processes '0'" -n 0 "$PROBE"
bad "-n abc" "invalid number of processes 'abc'" -n abc "$PROBE"
bad "-n without value" "needs a number" -n
bad "no program" "missing the program" -n 2
bad "unknown option" "unknown option '--frobnicate'" -n 2 --frobnicate "$PROBE"
bad "missing program" "no-such-program-$TOKEN: command not found" -n 2 "no-such-program-$TOKEN"
bad "missing path" "No such file or directory" -n 2 "$WORK/nothing-here"
touch "$WORK/not-executable"
bad "not executable" "Permission denied" -n 2 "$WORK/not-executable"
bad "directory" "Is a directory" -n 2 "$WORK"
bad "bad timeout" "invalid --timeout" -n 2 --timeout -1 "$PROBE"
bad "bad binding" "invalid --bind-to" -n 2 --bind-to socket "$PROBE"

run_rrun "$WORK/out" "$WORK/err" --help
expect_rc "--help" 0
expect_grep "--help text" "^Usage: rrun" "$WORK/out"
run_rrun "$WORK/out" "$WORK/err" --version
expect_rc "--version" 0
expect_grep "--version text" "^rrun \(rrt\) [0-9]" "$WORK/out"

# Oversubscription is allowed without --oversubscribe.
run_rrun "$WORK/out" "$WORK/err" -n 8 "$PROBE" "$TOKEN"
expect_rc "8 ranks, no --oversubscribe" 0
run_rrun "$WORK/out" "$WORK/err" -n 2 --oversubscribe "$PROBE" "$TOKEN"
expect_rc "--oversubscribe accepted" 0
finish
