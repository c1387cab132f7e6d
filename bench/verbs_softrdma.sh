#!/bin/sh
# rrt over verbs against raw verbs programs on the software RDMA device (tests/softrdma), rounds
# interleaved so that load hits both alike:
#   latency  8-byte ping-pong: perftest's ib_send_lat (SEND/RECV) vs rrt_latency
#   bandwidth 1 MiB: perftest's ib_read_bw (RDMA READ) vs rrt_bw (RGET rendezvous)
# Usage: bench/verbs_softrdma.sh [ROUNDS]   (from the build directory, after make)
# Figures are those of an emulation (CMA copies by the device's progress thread), not of a NIC.
set -u
rounds=${1:-3}
top_builddir=${top_builddir:-.}
. tests/softrdma/env.sh || exit 1
export RRT_TRANSPORTS=verbs
pair() {  # program args... : server and client on one port; prints the client's output
  port=$(( 20000 + $(od -An -N2 -tu2 /dev/urandom) % 40000 ))
  timeout 120 "$@" -p "$port" >/dev/null 2>&1 &
  s=$!
  sleep 0.5
  timeout 120 "$@" -p "$port" 127.0.0.1 2>&1
  wait $s
}
for r in $(seq "$rounds"); do
  raw=$(pair ib_send_lat -d softrdma0 -x 0 -F -s 8 -n 5000 | awk '$1 == 8 {print $5 " typical, " $6 " avg"}')
  rl=$(./rrun -n 2 apps/rrt_latency -m 8:8 -i 5000 2>&1 | awk '$1 == 8 {print $2}')
  rbw=$(pair ib_read_bw -d softrdma0 -x 0 -F -s 1048576 -n 500 | awk '$1 == 1048576 {print $4}')
  bw=$(./rrun -n 2 apps/rrt_bw -m 1048576:1048576 -i 8 2>&1 | awk '$1 == 1048576 {print $2}')
  echo "round $r: 8 B one-way latency us: ib_send_lat $raw | rrt_latency $rl;" \
       "1 MiB MB/s: ib_read_bw $rbw | rrt_bw $bw"
done
