#!/bin/bash
# rrun removes /dev/shm/rrt-<jobId>* and its PMIx temp dir after every ending: success, failure,
# a rank killed by SIGKILL, and rrun itself killed by SIGKILL (its cleanup helper does it).
set -u
. "$(dirname "$0")/lib.sh"
[ -d /dev/shm ] && [ -w /dev/shm ] || { echo "SKIP: no writable /dev/shm"; exit 77; }
export TMPDIR="$WORK/tmp"   # rrun's private PMIx dir goes here, so leftovers are visible
mkdir -p "$TMPDIR"

leftovers() { ls /dev/shm | grep -F "rrt-$1" ; }
check_clean() {  # check_clean WHAT OUTFILE
  local ns
  # Any rank's line names the job (in the failure case rank 0 may be stopped before it writes).
  ns=$(grep -oE '/dev/shm/rrt-[^ ]*-probe[0-9]+' "$2" | head -1 | sed -E 's|/dev/shm/rrt-||; s|-probe[0-9]+$||')
  if [ -z "$ns" ]; then fail "$1: the ranks created no segment"; return; fi
  local deadline=$(( $(now_ms) + 5000 ))
  while [ -n "$(leftovers "$ns")" ] && [ "$(now_ms)" -lt "$deadline" ]; do sleep 0.05; done
  [ -z "$(leftovers "$ns")" ] && pass "$1: /dev/shm clean" || fail "$1: left $(leftovers "$ns")"
  deadline=$(( $(now_ms) + 5000 ))
  while [ -n "$(ls "$TMPDIR")" ] && [ "$(now_ms)" -lt "$deadline" ]; do sleep 0.05; done
  [ -z "$(ls "$TMPDIR")" ] && pass "$1: temp dir removed" || fail "$1: left $(ls "$TMPDIR")"
}

run_rrun "$WORK/out" "$WORK/err" -n 2 "$PROBE" --shm-leftover "$TOKEN"
expect_rc "success" 0
check_clean "success" "$WORK/out"

run_rrun "$WORK/out" "$WORK/err" -n 3 "$PROBE" --shm-leftover --exit 1:4 --sleep 60 "$TOKEN"
expect_rc "failure" 4
check_clean "failure" "$WORK/out"

mkdir -p "$WORK/pids"
"$RRUN" -n 2 "$PROBE" --shm-leftover --pidfile "$WORK/pids" --sleep 60 "$TOKEN" >"$WORK/out" 2>"$WORK/err" </dev/null &
bg=$!
wait_for_file "$WORK/pids/rank.1.pid" 10 && wait_for_file "$WORK/pids/rank.0.pid" 10
kill -KILL "$(cat "$WORK/pids/rank.0.pid")"
wait "$bg"
RC=$?
expect_rc "rank killed" 137
check_clean "rank killed" "$WORK/out"

rm -rf "$WORK/pids"; mkdir -p "$WORK/pids"
"$RRUN" -n 2 "$PROBE" --shm-leftover --pidfile "$WORK/pids" --sleep 60 "$TOKEN" >"$WORK/out" 2>"$WORK/err" </dev/null &
bg=$!
wait_for_file "$WORK/pids/rank.1.pid" 10 && wait_for_file "$WORK/pids/rank.0.pid" 10
kill -KILL "$bg"
wait "$bg" 2>/dev/null
wait_no_ranks "rrun killed" 2
check_clean "rrun killed" "$WORK/out"
finish
