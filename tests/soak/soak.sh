#!/bin/bash
# make check's soak: apps/rrt_stress for a short, bounded time on every transport this build
# has, so a new transport joins by being built. The transports are those `rrun -n 2 rrt_info`
# lists (besides self), or SOAK_TRANSPORTS="shm tcp ..." when set. Each runs 4 ranks with the
# defaults and 3 ranks with the pipelined-copy rendezvous and a small eager limit; self runs
# as a world of one. SOAK_SECONDS (default 6) per run; SOAK_ARGS adds rrt_stress options.
# Passes when every run printed "PASS rrt_stress (N ranks)" and exited 0.
set -u
: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${SOAK_SECONDS:=6}"
RRUN="$top_builddir/rrun"
STRESS="$top_builddir/apps/rrt_stress"
INFO="$top_builddir/apps/rrt_info"
for f in "$RRUN" "$STRESS" "$INFO"; do [ -x "$f" ] || { echo "FAIL: $f is not built"; exit 1; }; done

if [ -z "${SOAK_TRANSPORTS:-}" ]; then
  SOAK_TRANSPORTS=$(timeout 60 "$RRUN" -n 2 "$INFO" 2>/dev/null |
    awk '/^transports/ {on=1; next} on && /^  [a-z]/ {print $1; next} on {exit}' |
    grep -vx self | sort -u | tr '\n' ' ')
fi
echo "transports: self ${SOAK_TRANSPORTS}"
limit=$(( SOAK_SECONDS * 4 + 60 ))  # a hang fails the test instead of stalling make check
status=0
out=$(mktemp "${TMPDIR:-/tmp}/rrt-soak.XXXXXX")
trap 'rm -f "$out"' EXIT

run() {  # run LABEL NPROCS ENV... -- rrt_stress args
  local label=$1 np=$2
  shift 2
  local -a envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  local cmd
  if [ "$np" = 0 ]; then
    cmd=(env "${envs[@]}" timeout -k 5 "$limit" "$STRESS" "$@")
    np=1
  else
    cmd=(env "${envs[@]}" "$RRUN" -n "$np" --timeout "$limit" "$STRESS" "$@")
  fi
  if "${cmd[@]}" >"$out" 2>&1 && grep -q "^PASS rrt_stress ($np ranks)" "$out"; then
    echo "ok: $label: $(grep '^rrt_stress:' "$out")"
  else
    echo "FAIL: $label (exit $?): ${cmd[*]}"
    tail -30 "$out"
    status=1
  fi
}

run "self (one rank)" 0 -- --seconds "$SOAK_SECONDS" --seed 11 ${SOAK_ARGS:-}
for t in $SOAK_TRANSPORTS; do
  run "$t, 4 ranks" 4 RRT_TRANSPORTS="$t" -- --seconds "$SOAK_SECONDS" --seed 12 ${SOAK_ARGS:-}
  run "$t, 3 ranks, copy rendezvous, eager <= 1K" 3 RRT_TRANSPORTS="$t" RRT_RNDV_PROTO=copy \
    RRT_EAGER_LIMIT=1024 -- --seconds "$SOAK_SECONDS" --seed 13 --max-size 4M ${SOAK_ARGS:-}
done
exit $status
