#!/bin/bash
# make check's soak: apps/rrt_stress for a short, bounded time on every transport this build
# has, so a new transport joins by being built. The transports are those `rrun -n 2 rrt_info`
# lists (besides self), plus tcp (which rrt_info lists only for jobs across nodes; forced with
# RRT_TRANSPORTS=tcp it runs over loopback) and, when the software RDMA device is built
# (tests/softrdma/lib), verbs over it; or SOAK_TRANSPORTS="shm tcp verbs ..." when set. Each
# runs 4 ranks with the defaults and 3 ranks with the pipelined-copy rendezvous and a small
# eager limit; self runs as a world of one. SOAK_SECONDS (default 6) per run; SOAK_ARGS adds
# rrt_stress options. Passes when every run exited 0, printed "PASS rrt_stress (N ranks)" and a
# summary line with messages > 0, bytes > 0 and 0 mismatches.
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
    grep -vx self)
  SOAK_TRANSPORTS=$(printf '%s\n' $SOAK_TRANSPORTS tcp | sort -u | tr '\n' ' ')
  # verbs over the software device unless rrt_info found a real one (then it is listed already).
  if [ -f "$top_builddir/tests/softrdma/lib/libibverbs.so.1" ] &&
     ! printf '%s\n' $SOAK_TRANSPORTS | grep -qx verbs; then
    SOAK_TRANSPORTS="${SOAK_TRANSPORTS}verbs-soft"
  fi
fi
# verbs-soft: verbs with LD_LIBRARY_PATH on the software RDMA device (tests/softrdma/env.sh).
soft_ld=
case " $SOAK_TRANSPORTS " in *" verbs-soft "*)
  top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
  soft_ld=$(. "$top_srcdir/tests/softrdma/env.sh" && echo "$LD_LIBRARY_PATH") ||
    { echo "FAIL: verbs-soft asked for, but the software RDMA device is not built"; exit 1; }
esac
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
  local rc=0 summary
  "${cmd[@]}" >"$out" 2>&1 || rc=$?
  summary=$(grep "^rrt_stress: $np ranks, " "$out")
  # "... N messages, B bytes, C collectives (per rank, summed), M mismatches"
  if [ "$rc" -eq 0 ] && grep -q "^PASS rrt_stress ($np ranks)" "$out" &&
     awk '{ for (i = 2; i <= NF; i++) {
              if ($i ~ /^messages/) m = $(i-1); if ($i ~ /^bytes/) b = $(i-1)
              if ($i ~ /^mismatches/) x = $(i-1) } }
          END { exit !(m > 0 && b > 0 && x == "0") }' <<<"$summary"; then
    echo "ok: $label: $summary"
  else
    echo "FAIL: $label (exit $rc): ${cmd[*]}"
    tail -30 "$out"
    status=1
  fi
}

run "self (one rank)" 0 -- --seconds "$SOAK_SECONDS" --seed 11 ${SOAK_ARGS:-}
for t in $SOAK_TRANSPORTS; do
  envs=(RRT_TRANSPORTS="$t")
  [ "$t" = verbs-soft ] && envs=(RRT_TRANSPORTS=verbs LD_LIBRARY_PATH="$soft_ld")
  run "$t, 4 ranks" 4 "${envs[@]}" -- --seconds "$SOAK_SECONDS" --seed 12 ${SOAK_ARGS:-}
  run "$t, 3 ranks, copy rendezvous, eager <= 1K" 3 "${envs[@]}" RRT_RNDV_PROTO=copy \
    RRT_EAGER_LIMIT=1024 -- --seconds "$SOAK_SECONDS" --seed 13 --max-size 4M ${SOAK_ARGS:-}
done
exit $status
