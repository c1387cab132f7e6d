#!/bin/sh
# The blocking collectives run their algorithm's direct form (runtime/coll/direct.h), not a
# task: checked in the trace log of short benchmark runs, one per algorithm that has a form,
# and of coll_check runs at 3 ranks for the collectives without a benchmark app.
# What the forms compute is checked by coll_check (tests/coll/testlist: its blocking calls, with
# the algorithms forced, at 1 to 16 ranks); their errors by tests/fault (coll-to-dead).
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
RRUN="$top_builddir/rrun"
# One short run of apps/APP at NP ranks with a trace log (barrier takes no size).
trace_run() {
  np=$1 app=$2
  shift 2
  size=-m; sizes=8:8
  [ "$app" = rrt_barrier ] && size= && sizes=
  env RRT_LOG=trace "$@" timeout 60 "$RRUN" -n "$np" "$top_builddir/apps/$app" $size $sizes \
    -i 2 -x 0 >/dev/null 2>"$log"
}
log=$(mktemp "${TMPDIR:-/tmp}/rrt-coll-direct.XXXXXX") || exit 2
trap 'rm -f "$log"' EXIT
failed=0
# expect NP APP ALGORITHM-LINE [env...]
expect() {
  np=$1 app=$2 want=$3
  shift 3
  if ! trace_run "$np" "$app" "$@"; then
    echo "FAIL: $app at $np ranks did not run:"; tail -5 "$log"; failed=1; return
  fi
  if grep -q "coll: $want (direct) seq" "$log"; then
    echo "ok: $app at $np ranks: $want (direct)"
  else
    echo "FAIL: $app at $np ranks: no 'coll: $want (direct)' line:"
    grep "coll: " "$log" | head -5
    failed=1
  fi
}
expect 2 rrt_barrier "barrier dissemination"
expect 3 rrt_barrier "barrier linear"
expect 3 rrt_barrier "barrier shm" RRT_COLL_BARRIER=shm
expect 2 rrt_bcast "bcast shm"
expect 2 rrt_bcast "bcast binomial" RRT_COLL_BCAST=binomial
expect 3 rrt_bcast "bcast linear"
expect 3 rrt_bcast "bcast shm" RRT_COLL_BCAST=shm
expect 2 rrt_reduce "reduce binomial" RRT_COLL_REDUCE=binomial
expect 2 rrt_reduce "reduce shm_flat"
expect 4 rrt_reduce "reduce linear" RRT_COLL_REDUCE=linear
expect 4 rrt_reduce "reduce shm_flat"
expect 3 rrt_reduce "reduce linear" RRT_COLL_REDUCE=linear
expect 3 rrt_allreduce "allreduce recursive_doubling" RRT_COLL_ALLREDUCE=recursive_doubling
expect 3 rrt_allreduce "allreduce shm_flat"
expect 2 rrt_allreduce "allreduce shm" RRT_COLL_ALLREDUCE=shm
expect 3 rrt_reduce "reduce shm" RRT_COLL_REDUCE=shm
expect 2 rrt_allgather "allgather shm"
expect 2 rrt_allgather "allgather recursive_doubling" RRT_COLL_ALLGATHER=recursive_doubling
expect 3 rrt_allgather "allgather recursive_doubling" RRT_COLL_ALLGATHER=recursive_doubling
expect 3 rrt_allgather "allgather shm"
expect 3 rrt_allgather "allgather bruck" RRT_COLL_ALLGATHER=bruck
expect 3 rrt_allgather "allgather ring" RRT_COLL_ALLGATHER=ring
expect 3 rrt_allgather "allgather scattered" RRT_COLL_ALLGATHER=scattered
expect 3 rrt_alltoall "alltoall pairwise" RRT_COLL_ALLTOALL=pairwise
expect 3 rrt_alltoall "alltoall bruck" RRT_COLL_ALLTOALL=bruck
expect 3 rrt_alltoall "alltoall scattered" RRT_COLL_ALLTOALL=scattered
expect 3 rrt_alltoall "alltoall shm"
expect 5 rrt_gather "gather binomial"
expect 5 rrt_scatter "scatter binomial"
expect 3 rrt_reduce_scatter "reduce_scatter recursive_halving" RRT_COLL_REDUCE_SCATTER=recursive_halving
expect 3 rrt_reduce_scatter "reduce_scatter shm"
# Collectives without a benchmark app: coll_check's blocking calls show their form.
# expect_check NP "ALGORITHM-LINE"... -- [env...]
expect_check() {
  np=$1
  shift
  wants=
  while [ "$1" != -- ]; do wants="$wants|$1"; shift; done
  shift
  if ! env RRT_LOG=trace "$@" timeout 120 "$RRUN" -n "$np" "$top_builddir/tests/coll/coll_check" \
      >/dev/null 2>"$log"; then
    echo "FAIL: coll_check at $np ranks did not pass:"; tail -5 "$log"; failed=1; return
  fi
  IFS='|'
  for want in ${wants#|}; do
    if grep -q "coll: $want (direct) seq" "$log"; then
      echo "ok: coll_check at $np ranks: $want (direct)"
    else
      echo "FAIL: coll_check at $np ranks: no 'coll: $want (direct)' line"; failed=1
    fi
  done
  unset IFS
}
expect_check 3 "scan recursive_doubling" "exscan recursive_doubling" "alltoallv pairwise" \
  "gatherv linear" "scatterv linear" "allgatherv shm" --
expect_check 3 "alltoallv scattered" "allgatherv scattered" -- RRT_COLL_ALLTOALLV=scattered \
  RRT_COLL_ALLGATHERV=scattered
expect_check 3 "allgatherv ring" -- RRT_COLL_ALLGATHERV=ring
# A forced algorithm without a direct form still runs as a task.
expect_task() {
  np=$1 app=$2 want=$3
  shift 3
  trace_run "$np" "$app" "$@"
  if grep -q "coll: $want seq" "$log"; then
    echo "ok: $app at $np ranks: $want (task)"
  else
    echo "FAIL: $app at $np ranks: no 'coll: $want seq' line"; failed=1
  fi
}
expect_task 2 rrt_bcast "bcast chain" RRT_COLL_BCAST=chain
exit $failed
