#!/bin/bash
# The fast path allocates nothing: each point-to-point and collective benchmark app runs twice
# through rrun, with few and with many iterations, under an LD_PRELOAD shim that counts every
# rank's heap allocations (alloc_count.c). Once warm, a call that allocates shows as a
# difference of at least one allocation per extra iteration (200 here; rrt_bw's iteration is 64
# messages); the check allows 100. What one-off growth takes stays below that: a receiver that
# falls behind grows its unexpected-message queue once, by up to a window of messages (rrt_bw 8 B
# on a loaded machine: +31 in one of 7 runs, every other case +0 to +8).
# Sizes: 8 B (eager, the small-message algorithms) and 128 KiB (rendezvous, the large ones);
# 2 ranks for point-to-point, 3 for collectives (the non-power-of-two paths) and 4 for the
# power-of-two ones. mpi_vcoll.c: the v-collectives through the MPI layer (16 B per rank,
# blocking and non-blocking). Skips (77) in sanitizer builds, whose allocator the shim would
# bypass.
set -u
: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
RRUN=$top_builddir/rrun
SHIM=$top_builddir/tests/steady/.libs/liballoccount.so
FEW=${STEADY_FEW:-50}
MANY=${STEADY_MANY:-250}
SLACK=${STEADY_SLACK:-100}
for f in "$RRUN" "$SHIM"; do [ -e "$f" ] || { echo "FAIL: $f is not built"; exit 1; }; done
lib=$(ls "$top_builddir"/.libs/librrt.so.*.*.* 2>/dev/null | head -n 1)
# An instrumented library calls into the sanitizer runtime: undefined __asan_/__tsan_/__ubsan_
# symbols, whether the runtime is a shared library (gcc) or linked into the executables (clang,
# where ldd shows nothing).
if [ -n "$lib" ] && nm -D --undefined-only "$lib" 2>/dev/null | grep -Eq ' __(a|t|ub)san_'; then
  echo "skipped: sanitizer build (the shim would bypass the sanitizer's allocator)"
  exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/rrt-steady.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT

# counts NP APP SIZE ITER: prints the allocation count of every rank, in rank order.
counts() {
  rm -f "$work"/rank.*
  local cmd=("$top_builddir/apps/$2" -m "$3:$3" -i "$4" -x 5)
  [ "$2" = rrt_barrier ] && cmd=("$top_builddir/apps/$2" -i "$4" -x 5)
  [ "$2" = mpi_vcoll ] && cmd=("$top_builddir/tests/steady/mpi_vcoll" "$4")
  if ! RRT_ALLOC_COUNT_DIR=$work LD_PRELOAD=$SHIM timeout 120 "$RRUN" -n "$1" "${cmd[@]}" \
      >"$work/out" 2>&1; then
    echo "FAIL: rrun -n $1 $2 -m $3:$3 -i $4:" >&2
    cat "$work/out" >&2
    return 1
  fi
  for ((r = 0; r < $1; r++)); do
    [ -f "$work/rank.$r" ] || { echo "FAIL: $2: rank $r wrote no count" >&2; return 1; }
    printf '%s ' "$(cat "$work/rank.$r")"
  done
}

cases="2:rrt_latency 2:rrt_bw"
for app in barrier bcast reduce allreduce allgather alltoall gather scatter reduce_scatter; do
  cases="$cases 3:rrt_$app"
done
cases="$cases 4:rrt_allreduce 4:rrt_allgather 4:rrt_alltoall 3:mpi_vcoll"
status=0
for c in $cases; do
  np=${c%%:*} app=${c#*:}
  sizes="8 131072"
  [ "$app" = rrt_barrier ] && sizes=0
  [ "$app" = mpi_vcoll ] && sizes=16
  for size in $sizes; do
    few=$(counts "$np" "$app" "$size" "$FEW") || { status=1; continue; }
    many=$(counts "$np" "$app" "$size" "$MANY") || { status=1; continue; }
    read -r -a a <<<"$few"
    read -r -a b <<<"$many"
    worst=0
    for ((r = 0; r < np; r++)); do
      d=$((b[r] - a[r]))
      ((d > worst)) && worst=$d
    done
    verdict=ok
    if ((worst > SLACK)); then verdict=FAIL; status=1; fi
    printf '%-4s %-18s np %d %7d B: allocations at %d / %d iterations: %s/ %s(worst rank +%d)\n' \
      "$verdict" "$app" "$np" "$size" "$FEW" "$MANY" "$few" "$many" "$worst"
  done
done
exit $status
