#!/bin/sh
# The GPU suite's programs on the software GPU (tests/softgpu: a stand-in libcuda.so.1), so that
# rrt's device-buffer paths run across processes in every make check: point-to-point D->D, D->H,
# H->D at every size class by CUDA IPC (shm, 2 and 4 ranks), by the pipelined staging (shm with
# RRT_CUDA_IPC=off, and TCP), by GPUDirect RDMA over the software RDMA device (verbs: the log
# must say the device memory was registered through its dma-buf; and with the export refused,
# SOFTGPU_DMABUF=0, the pipeline instead), collectives on device buffers (2 and 4 ranks), and
# the -d cuda benchmarks once each. The device kernels are not run: the software GPU has none
# (rrt reduces device buffers on the host then).
b=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
src=${top_srcdir:-$b}
lib=$(cd "$b/tests/softgpu/lib" 2>/dev/null && pwd)
if [ -z "$lib" ] || [ ! -f "$lib/libcuda.so.1" ]; then
  echo "FAIL: the software GPU is not built ($b/tests/softgpu/lib/libcuda.so.1)"; exit 1
fi
LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH RRT_CUDA=on  # rrt_init fails if rrt cannot use the (software) GPU
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
run() {  # run NAME COMMAND...: output kept in $work/NAME
  name=$1; shift
  if "$@" >"$work/$name" 2>&1; then echo "ok: $name"
  else echo "FAIL: $name (exit $?): $*"; tail -n 30 "$work/$name"; fail=1; fi
}
expect() {  # expect NAME PATTERN: a line of $work/NAME matches
  if grep -qE "$2" "$work/$1"; then echo "ok: $1: /$2/"
  else echo "FAIL: $1: no line matches /$2/"; tail -n 30 "$work/$1"; fail=1; fi
}
r="$b/rrun"
p2p="$b/tests/gpu/gpu_p2p"
run probe "$p2p" --probe
for n in 2 4; do
  run "p2p_ipc_$n" "$r" -n $n --timeout 120 "$p2p"
  run "coll_$n" "$r" -n $n --timeout 120 "$b/tests/gpu/gpu_coll"
done
run p2p_pipelined_shm env RRT_CUDA_IPC=off "$r" -n 2 --timeout 120 "$p2p"
run p2p_pipelined_tcp env RRT_TRANSPORTS=tcp "$r" -n 2 --timeout 120 "$p2p"
if [ -f "$b/tests/softrdma/lib/libibverbs.so.1" ]; then
  top_builddir=$b . "$src/tests/softrdma/env.sh"
  run p2p_gdr env RRT_TRANSPORTS=verbs RRT_LOG=info "$r" -n 2 --timeout 120 "$p2p"
  expect p2p_gdr "GPUDirect RDMA: device memory registered through dmabuf"
  run p2p_gdr_refused env RRT_TRANSPORTS=verbs RRT_LOG=info SOFTGPU_DMABUF=0 "$r" -n 2 --timeout 120 "$p2p"
  expect p2p_gdr_refused "GPUDirect RDMA off \(device memory registration refused"
  run coll_gdr env RRT_TRANSPORTS=verbs "$r" -n 4 --timeout 120 "$b/tests/gpu/gpu_coll"
else
  echo "note: no software RDMA device in this build: GPUDirect RDMA not run"
fi
run latency_dd "$r" -n 2 --timeout 120 "$b/apps/rrt_latency" -d cuda -m 0:1048576 -i 50 -x 5 D D
run bw_dh "$r" -n 2 --timeout 120 "$b/apps/rrt_bw" -d cuda -m 1:4194304 -i 10 -x 2 D H
run allreduce "$r" -n 4 --timeout 120 "$b/apps/rrt_allreduce" -d cuda -T float -m 4:1048576 -i 10 -x 2
exit $fail
