#!/bin/sh
# Buffers from rrt_alloc_mem are read by peers where they lie (runtime/coll/shm_reduction.h,
# shm_exchange.h):
# checked in the debug log of short benchmark runs (-a: buffers from rrt_alloc_mem), which says
# each time a rank maps a peer's memory. What the calls compute with such buffers is checked by
# coll_check and coll_shm_race (--alloc lines in tests/coll/testlist).
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
log=$(mktemp "${TMPDIR:-/tmp}/rrt-coll-shared.XXXXXX") || exit 2
trap 'rm -f "$log"' EXIT
failed=0
# expect MAPPINGS NP APP SIZE [args and env...]: the run passes, with MAPPINGS peer mappings
# (one per peer and shared buffer: the whole run reuses its buffers).
expect() {
  want=$1 np=$2 app=$3 size=$4
  shift 4
  if ! env RRT_LOG=debug "$@" timeout 60 "$top_builddir/rrun" -n "$np" \
      "$top_builddir/apps/$app" -m "$size:$size" -i 3 -x 1 -T float $A >/dev/null 2>"$log"; then
    echo "FAIL: $app at $np ranks did not run:"; tail -5 "$log"; failed=1; return
  fi
  got=$(grep -c "peer memory: mapped" "$log")
  if [ "$got" -eq "$want" ]; then
    echo "ok: $app $size bytes at $np ranks${A:+ ($A)}: $got peer mappings"
  else
    echo "FAIL: $app $size bytes at $np ranks${A:+ ($A)}: $got peer mappings, want $want"
    grep "peer memory\|coll: " "$log" | head -8
    failed=1
  fi
}
A=-a
# 2 ranks, 2M: inputs and outputs shared (2M >= 256K x 2^2): 2 per rank.
expect 4 2 rrt_allreduce 2097152
# 2 ranks, 256K: the output goes through the slot below 1M: inputs only.
expect 2 2 rrt_allreduce 262144
# 2 ranks, 64K: the table's shm allreduce from 32K, inputs shared.
expect 2 2 rrt_allreduce 65536
# 3 ranks: every rank maps its 2 peers' inputs; with RRT_COLL_SHM_SHARED_OUTPUT=0 the outputs too.
expect 6 3 rrt_allreduce 262144
expect 12 3 rrt_allreduce 262144 RRT_COLL_SHM_SHARED_OUTPUT=0
# reduce-scatter and reduce (every rank folds its region of the pipeline): inputs.
expect 6 3 rrt_reduce_scatter 262144 RRT_COLL_REDUCE_SCATTER=shm
expect 2 2 rrt_reduce 524288 RRT_COLL_REDUCE=shm
# allgather: every rank maps its peers' outputs (their own blocks lie there), from blocks of 1M
# (4 x RRT_COLL_SHM_SHARED_OUTPUT). Forced: on single-copy machines the 2-rank table row is the
# ring (selection.cc).
expect 2 2 rrt_allgather 1048576 RRT_COLL_ALLGATHER=shm
expect 0 2 rrt_allgather 262144 RRT_COLL_ALLGATHER=shm
expect 6 3 rrt_allgather 65536 RRT_COLL_ALLGATHER=shm RRT_COLL_SHM_SHARED_OUTPUT=0
# Private buffers: nothing mapped.
A=
expect 0 2 rrt_allreduce 2097152
exit $failed
