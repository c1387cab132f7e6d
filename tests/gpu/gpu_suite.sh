#!/bin/sh
# make check entry of the GPU suite. Without a GPU (or libcuda, or a CUDA build) it says so and
# skips (exit 77). With one: the device kernels against the host kernels, point-to-point D->D,
# D->H, H->D for every size class and collectives on device buffers for every op x datatype, at
# 2 and 4 ranks on one GPU, and the -d cuda benchmarks once each.
b=${top_builddir:-$(dirname "$0")/../..}
probe=$("$b/tests/gpu/gpu_p2p" --probe 2>&1)
rc=$?
if [ "$rc" -eq 77 ]; then
  echo "$probe"
  exit 77
fi
if [ "$rc" -ne 0 ]; then
  echo "gpu_p2p --probe failed ($rc): $probe"
  exit 1
fi
fail=0
run() {
  echo "== $*"
  "$@" || { echo "FAILED ($?): $*"; fail=1; }
}
run "$b/tests/gpu/gpu_kernels"
for n in 2 4; do
  run "$b/rrun" -n "$n" --timeout 300 "$b/tests/gpu/gpu_p2p"
  run "$b/rrun" -n "$n" --timeout 300 "$b/tests/gpu/gpu_coll"
done
run "$b/rrun" -n 2 --timeout 300 "$b/apps/rrt_latency" -d cuda -m 0:1048576 -i 200 -x 20 D D
run "$b/rrun" -n 2 --timeout 300 "$b/apps/rrt_bw" -d cuda -m 1:4194304 -i 20 -x 5 D H
run "$b/rrun" -n 4 --timeout 300 "$b/apps/rrt_allreduce" -d cuda -T float -m 4:4194304 -i 20 -x 5
exit $fail
