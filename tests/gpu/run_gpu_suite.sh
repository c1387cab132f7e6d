#!/bin/sh
# The GPU suite as one prepared script for a machine with an NVIDIA GPU (a few minutes):
# builds rrt with CUDA, runs the GPU unit tests and tests/gpu/gpu_suite.sh, then the device
# benchmarks at the sizes the issue names, and prints a summary. Usage, from the source tree:
#   tests/gpu/run_gpu_suite.sh [CUDA_DIR]          (default /usr/local/cuda)
# Logs: gpu-build.log, gpu-suite.log, gpu-bench.log in the current directory.
set -u
cuda=${1:-/usr/local/cuda}
src=$(cd "$(dirname "$0")/../.." && pwd)
cd "$src" || exit 1
jobs=$(nproc 2>/dev/null || echo 4)
nvidia-smi -L 2>/dev/null || echo "(no nvidia-smi)"
if ! { [ -x ./config.status ] || { ./autogen.sh && ./configure --with-cuda="$cuda"; }; } > gpu-build.log 2>&1 ||
   ! make -j"$jobs" > gpu-build.log 2>&1; then
  echo "BUILD FAILED (gpu-build.log):"; tail -30 gpu-build.log; exit 1
fi
grep -q '^#define RRT_HAVE_CUDA 1' rrt_config.h || { echo "configure found no CUDA toolkit in $cuda"; exit 1; }
timeout 900 make -j"$jobs" check TESTS="tests/unit/gpu_test tests/gpu/gpu_suite.sh" > gpu-suite.log 2>&1
suite=$?
{
  echo "== rrt_bw -d cuda D D (device to device, one node; compare with a raw cuMemcpy peer copy)"
  ./rrun -n 2 --timeout 300 apps/rrt_bw -d cuda -m 4194304:67108864 -i 20 -x 5 D D
  echo "== rrt_allreduce -d cuda, 2 and 4 ranks on one GPU"
  ./rrun -n 2 --timeout 300 apps/rrt_allreduce -d cuda -T float -m 4:67108864 -i 20 -x 5
  ./rrun -n 4 --timeout 300 apps/rrt_allreduce -d cuda -T float -m 4:67108864 -i 20 -x 5
} > gpu-bench.log 2>&1
echo "==== summary"
grep -E '^(PASS|FAIL|SKIP|XFAIL|ERROR):' gpu-suite.log
grep -E 'gpu_(p2p|coll|kernels):|SKIP' tests/gpu/gpu_suite.sh.log 2>/dev/null
tail -n 40 gpu-bench.log
[ $suite -eq 0 ] && echo "GPU suite: PASS" || echo "GPU suite: FAIL (gpu-suite.log, tests/gpu/gpu_suite.sh.log)"
exit $suite
