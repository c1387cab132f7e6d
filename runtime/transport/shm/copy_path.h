// Where the shm transport's two copies through a ring give way to one CMA copy
// (process_vm_readv / writev), by the kind of CPU: the crossover moves 30x between the two kinds
// of machine this project has run on, so one constant serves neither.
//
// Through the ring, every line crosses between the two cores twice per message (the sender's
// writes take it from the receiver's cache, the receiver's reads take it back); a CMA get
// reads the sender's buffer once, at the price of a system call and pinning its pages.
//   AMD EPYC (Zen, KVM, 2 vCPUs in one core complex): lines move between the cores through the
//     shared L3 cheaply; ring copies beat a CMA get up to 256K in every vCPU placement (2-rank
//     latency and bandwidth, tests/unit/shm_transport_test.cc with RRT_SHM_BENCH=1; alltoall at
//     4 ranks 32K: 35.3 us through the rings, 54.9 with CMA from 16K). Splitting a CMA copy
//     between the two ranks paid from 256K (2 ranks 256K, split from 256K / 512K: bcast 18.4 /
//     29.5 us, bw 9.7 / 8.2 GB/s; allreduce, alltoall, allgather 128K-1M even).
//   Intel Xeon (Sapphire Rapids, KVM, 2 vCPUs, 2026-12-08): a line that another core wrote
//     comes over the mesh; a CMA get wins from 8K (2-rank ping-pong, medians of 3 rotated
//     rounds, us, ring / CMA: 8K 1.82 / 1.21, 32K 5.76 / 2.45, 128K 12.45 / 5.87; bidirectional
//     bandwidth 16K-128K 2.0-3.2x; 4K 1.11 / 1.05). Splitting a CMA copy between the two ranks
//     pays from 1M there, not 256K (2-rank reduce, split from 256K / 1M: 256K 23.0 / 12.1 us,
//     512K 31.1 / 26.8; 1M 68.7 either way, 95.0 unsplit).
// Other CPUs keep the copies' longer range (the AMD figures), as before this table.
// RRT_SHM_COPY_PATH=rings|cma picks a profile whatever the CPU; RRT_EAGER_LIMIT,
// RRT_SHM_CMA_THRESHOLD and RRT_SHM_CMA_SPLIT override single values.
#pragma once

#include <cstddef>

namespace rrt::transport::shm {

enum class CopyProfile { Rings, Cma };  // Rings: measured on AMD EPYC; Cma: on Intel Xeon

struct CopyPath {
  size_t eagerDefault;  // largest message sent eagerly (through the ring, no handshake)
  size_t minZcopy;      // smallest message moved by CMA (the rendezvous copies through the ring below)
  size_t splitMin;      // smallest CMA transfer both ranks copy a part of (RRT_SHM_CMA_SPLIT)
};

constexpr CopyPath copyPathFor(CopyProfile k, size_t maxAm) {
  // The eager limit stays within half the largest record the rings carry.
  const size_t amHalf = maxAm / 2;
  return k == CopyProfile::Cma
             ? CopyPath{amHalf < 4096 ? amHalf : 4096, 4096 + 1, size_t{1} << 20}
             : CopyPath{amHalf < 16384 ? amHalf : 16384, size_t{256} << 10, size_t{256} << 10};
}

// The profile in force: RRT_SHM_COPY_PATH ("rings", "cma"), else by the CPU.
CopyProfile copyProfile();

}  // namespace rrt::transport::shm
