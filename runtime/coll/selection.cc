// The algorithm registry and the selection table. No if-ladders: data, then one loop.
#include "runtime/coll/selection.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <strings.h>

#include "runtime/coll/algorithms.h"
#include "runtime/coll/patterns.h"
#include "runtime/core/config.h"
#include "runtime/core/log.h"

namespace rrt::coll {
namespace {

using memory::MemType;
constexpr size_t K = 1024;
constexpr size_t M = 1024 * 1024;
constexpr size_t kInf = ~size_t{0};
constexpr int kAnyRanks = 1 << 30;

struct KindInfo {
  const char* name;
  const char* env;
  config::Tunable tunable;
};
const KindInfo kKinds[kCollKinds] = {
    {"barrier", "RRT_COLL_BARRIER", config::Tunable::CollBarrier},
    {"bcast", "RRT_COLL_BCAST", config::Tunable::CollBcast},
    {"reduce", "RRT_COLL_REDUCE", config::Tunable::CollReduce},
    {"allreduce", "RRT_COLL_ALLREDUCE", config::Tunable::CollAllreduce},
    {"allgather", "RRT_COLL_ALLGATHER", config::Tunable::CollAllgather},
    {"allgatherv", "RRT_COLL_ALLGATHERV", config::Tunable::CollAllgatherv},
    {"alltoall", "RRT_COLL_ALLTOALL", config::Tunable::CollAlltoall},
    {"alltoallv", "RRT_COLL_ALLTOALLV", config::Tunable::CollAlltoallv},
    {"gather", "RRT_COLL_GATHER", config::Tunable::CollGather},
    {"gatherv", "RRT_COLL_GATHERV", config::Tunable::CollGatherv},
    {"scatter", "RRT_COLL_SCATTER", config::Tunable::CollScatter},
    {"scatterv", "RRT_COLL_SCATTERV", config::Tunable::CollScatterv},
    {"reduce_scatter", "RRT_COLL_REDUCE_SCATTER", config::Tunable::CollReduceScatter},
    {"scan", "RRT_COLL_SCAN", config::Tunable::CollScan},
    {"exscan", "RRT_COLL_EXSCAN", config::Tunable::CollExscan},
};

using CK = CollKind;

// clang-format off
const Algorithm kAlgorithms[] = {
  {CK::Barrier,   "dissemination",      makeBarrierDissemination,       0,
   "ceil(log p) alpha", barrierDisseminationDirect},
  {CK::Barrier,   "linear",             makeBarrierLinear,              0,
   "2 alpha + 2 (p-1) o at rank 0, rank 0 leaves first", barrierLinearDirect},
  {CK::Barrier,   "shm",                nullptr,                        kSharedMemory,
   "(p-1) counter loads per rank, one round, no message", barrierShmDirect},
  {CK::Bcast,     "binomial",           makeBcastBinomial,              0,
   "ceil(log p) (alpha + n beta)", bcastBinomialDirect},
  {CK::Bcast,     "linear",             makeBcastLinear,                0,
   "alpha + (p-1) n beta at the root, depth 1 (from 256K: the p-1 receivers copy from the root at once)",
   bcastLinearDirect},
  {CK::Bcast,     "shm",                nullptr,                        kSharedMemory,
   "n copy at the root + n copy per receiver, n/s counter waits, no message", bcastShmDirect},
  {CK::Bcast,     "scatter_allgather",  makeBcastScatterAllgather,      0,
   "(log p + p - 1) alpha + 2 (p-1)/p n beta"},
  {CK::Bcast,     "chain",              makeBcastChain,                 0,
   "(p - 2 + n/s) (alpha + s beta), segment s"},
  {CK::Bcast,     "hierarchical",       makeBcastHierarchical,          kNodeAware,
   "ceil(log m) (alpha_r + n beta_r) + ceil(log q) (alpha_l + n beta_l), m nodes of q ranks"},
  {CK::Reduce,    "binomial",           makeReduceBinomial,             0,
   "ceil(log p) (alpha + n beta + n gamma)", reduceBinomialDirect},
  {CK::Reduce,    "linear",             makeReduceLinear,               0,
   "alpha + (p-1) n (beta + gamma) at the root", reduceLinearDirect},
  {CK::Reduce,    "shm_flat",           nullptr,                        kSharedMemory,
   "n/s (p-1) counter waits + n copy, + p n load + (p-1) n gamma at the root, pieces s", reduceShmFlatDirect},
  {CK::Reduce,    "shm",                nullptr,                        kNeedsCommutative | kSharedMemory,
   "3 (p-1) n/(p s) counter waits + n copy + (p-1)/p n (load + gamma), + (p-1)/p n load at the root", reduceShmDirect},
  {CK::Reduce,    "rabenseifner",       makeReduceRabenseifner,         kNeedsCommutative,
   "2 log p alpha + 2 (p-1)/p n beta + (p-1)/p n gamma"},
  {CK::Allreduce, "recursive_doubling", makeAllreduceRecursiveDoubling, 0,
   "log p (alpha + n beta + n gamma) (+2 steps when p is not a power of two)", allreduceRecursiveDoublingDirect},
  {CK::Allreduce, "rabenseifner",       makeAllreduceRabenseifner,      kNeedsCommutative,
   "2 log p alpha + 2 (p-1)/p n beta + (p-1)/p n gamma"},
  {CK::Allreduce, "ring",               makeAllreduceRing,              kNeedsCommutative,
   "2 (p-1) alpha + 2 (p-1)/p n beta + (p-1)/p n gamma, segmented"},
  {CK::Allreduce, "shm_flat",           nullptr,                        kSharedMemory,
   "n/s (p-1) counter waits + n copy + p n load + (p-1) n gamma at every rank, pieces s", allreduceShmFlatDirect},
  {CK::Allreduce, "shm",                nullptr,                        kNeedsCommutative | kSharedMemory,
   "3 (p-1) n/(p s) counter waits + n copy + 2 (p-1)/p n load + (p-1)/p n gamma, pieces s", allreduceShmDirect},
  {CK::Allreduce, "hierarchical",       makeAllreduceHierarchical,      kNeedsCommutative | kNodeAware,
   "2 ceil(log q) (alpha_l + n beta_l) + ceil(log m) (alpha_r + n beta_r + n gamma), m nodes of q"},
  {CK::Allgather, "recursive_doubling", makeAllgatherRecursiveDoubling, 0,
   "log p alpha + (p-1)/p N beta (+2 steps when p is not a power of two)", allgatherRecursiveDoublingDirect},
  {CK::Allgather, "bruck",              makeAllgatherBruck,             0,
   "ceil(log p) alpha + (p-1)/p N beta + N copy", allgatherBruckDirect},
  {CK::Allgather, "ring",               makeAllgatherRing,              0,
   "(p-1) alpha + (p-1)/p N beta", allgatherRingDirect},
  {CK::Allgather, "scattered",          makeAllgatherScattered,         0,
   "all 2(p-1) messages posted at once: alpha + (p-1)/p N beta, contention",
   allgatherScatteredDirect},
  {CK::Allgather, "shm",                nullptr,                        kSharedMemory,
   "(p-1) n/(p s) counter waits + 2 N/p copy + (p-1)/p N load, pieces s", allgatherShmDirect},
  {CK::Allgatherv, "shm",               nullptr,                        kSharedMemory,
   "(p-1) n/(p s) counter waits + 2 N/p copy + (p-1)/p N load, pieces s", allgatherShmDirect},
  {CK::Allgatherv, "ring",              makeAllgatherRing,              0,
   "(p-1) alpha + (p-1)/p N beta", allgatherRingDirect},
  {CK::Allgatherv, "recursive_doubling", makeAllgatherRecursiveDoubling, 0,
   "log p alpha + (p-1)/p N beta (one message per block when displs are not uniform)",
   allgatherRecursiveDoublingDirect},
  {CK::Allgatherv, "scattered",         makeAllgatherScattered,         0,
   "all 2(p-1) messages posted at once: alpha + (p-1)/p N beta, contention",
   allgatherScatteredDirect},
  {CK::Alltoall,  "bruck",              makeAlltoallBruck,              0,
   "ceil(log p) alpha + (p/2) log p b beta + packing", alltoallBruckDirect},
  {CK::Alltoall,  "pairwise",           makeAlltoallPairwise,           0,
   "(p-1) (alpha + b beta)", alltoallPairwiseDirect},
  {CK::Alltoall,  "scattered",          makeAlltoallScattered,          0,
   "all 2(p-1) messages posted at once: alpha + (p-1) b beta, contention",
   alltoallScatteredDirect},
  {CK::Alltoall,  "shm",                nullptr,                        kSharedMemory,
   "(p-1) b/s counter waits + 2 (p-1) b copy, pieces s per peer", alltoallShmDirect},
  {CK::Alltoallv, "pairwise",           makeAlltoallvPairwise,          0,
   "(p-1) alpha + sum of blocks beta", alltoallvPairwiseDirect},
  {CK::Alltoallv, "scattered",          makeAlltoallvScattered,         0,
   "all 2(p-1) messages posted at once: alpha + sum beta, contention",
   alltoallvScatteredDirect},
  {CK::Gather,    "binomial",           makeGatherBinomial,             0,
   "ceil(log p) alpha + (p-1)/p N beta", gatherBinomialDirect},
  {CK::Gatherv,   "linear",             makeGathervLinear,              0,
   "(p-1) alpha + N beta at the root", gathervLinearDirect},
  {CK::Scatter,   "binomial",           makeScatterBinomial,            0,
   "ceil(log p) alpha + (p-1)/p N beta", scatterBinomialDirect},
  {CK::Scatterv,  "linear",             makeScattervLinear,             0,
   "(p-1) alpha + N beta at the root", scattervLinearDirect},
  {CK::ReduceScatter, "recursive_halving", makeReduceScatterRecursiveHalving, kNeedsCommutative,
   "log p alpha + (p-1)/p n beta + (p-1)/p n gamma (+2 steps when p is not a power of two)",
   reduceScatterRecursiveHalvingDirect},
  {CK::ReduceScatter, "ring",           makeReduceScatterRing,          kNeedsCommutative,
   "(p-1) alpha + (p-1)/p n beta + (p-1)/p n gamma, segmented"},
  {CK::ReduceScatter, "shm",            nullptr,                        kNeedsCommutative | kSharedMemory,
   "2 (p-1) n/(p s) counter waits + (n - n_r) copy + (p-1) n_r (load + gamma), pieces s", reduceScatterShmDirect},
  {CK::ReduceScatter, "reduce_scatterv", makeReduceScatterReduceScatterv, 0,
   "binomial reduce to 0 + linear scatterv: any op, rank order kept"},
  {CK::Scan,      "recursive_doubling", makeScanRecursiveDoubling,      0,
   "ceil(log p) (alpha + n beta + 2 n gamma)", scanRecursiveDoublingDirect},
  {CK::Exscan,    "recursive_doubling", makeExscanRecursiveDoubling,    0,
   "ceil(log p) (alpha + n beta + 2 n gamma)", exscanRecursiveDoublingDirect},
};

// Defaults for host memory. First match wins; every collective ends in a catch-all row.
// Measured on the 2-vCPU development machine (runtime/coll/tuning/shm-2vcpu.txt).
const Rule kRules[] = {
  // kind           mem            ranks          class              bytes         algorithm
  // 3..8 ranks: linear, as fast as dissemination alone (4 ranks: 17.1 / 17.3 us; 8: 41 / 65 us
  // on 2 cores) and rank 0 leaves first, so a bcast from 0 after it no longer waits for rank 0
  // to be rescheduled (4 ranks, 8 B: 0.33 / 6.6 us). 2 ranks: dissemination's single exchange.
  // shm (one round of counters) is the fastest barrier alone (2 ranks: 0.12-0.14 us against
  // 0.18-0.27; 3: 2.1-3.1 / 4.1; 4: 2.2-4.1 / 5.4-6.5; 8: 6.8 / 9.5-12.2) but lets every rank
  // leave at once: OSU's bcast loop (bcast, barrier) then measured 1.6-2.3 us at 4 ranks for
  // 8 B-4K against 0.11-0.20 with linear, and 0.34-0.40 against 0.27-0.28 at 2 ranks. Not a
  // default; RRT_COLL_BARRIER=shm for programs that mostly barrier.
  {CK::Barrier,   MemType::Host, 3, 8,         RankClass::Any,     0,     kInf,  "linear"},
  {CK::Barrier,   MemType::Host, 1, kAnyRanks, RankClass::Any,     0,     kInf,  "dissemination"},

  // Node-aware rows first: they apply only to communicators worth a hierarchy (several nodes,
  // several ranks on some). Not measured (no multi-node machine here): chosen by cost, and the
  // flat bandwidth-optimal algorithms kept for large allreduce.
  {CK::Bcast,     MemType::Host, 3, kAnyRanks, RankClass::Any,     0,     kInf,  "hierarchical"},
  // Where messages to local ranks go by a single copy from a few KiB (kShapeSingleCopy; the
  // Intel machine of 2026-12-08, transport/shm/copy_path.h), two copies through the segment
  // lose to it at 2 ranks from 8K (medians of 3 rotated rounds, us, against shm: 16K 1.20 /
  // 2.16, 256K 6.2 / 20.1; Open MPI 1.41, 9.67; 4K 0.78 / 0.66).
  {CK::Bcast,     MemType::Host, 2, 2,         RankClass::Any,     8*K,   kInf,  "binomial", kShapeSingleCopy},
  // And at 4 ranks the segment from 4K, not 64K: the linear bcast's pieces are rendezvous
  // messages there (4K 0.47 / 0.91 us, 8K 0.96 / 2.71, 32K 3.8 / 5.5; even from 64K).
  {CK::Bcast,     MemType::Host, 4, 4,         RankClass::Any,     4*K,   kInf,  "shm", kShapeSingleCopy},
  // Blocking calls of a communicator on one node: through its shared segment (bcast_shm.cc)
  // where that beats the messages (medians of 3 rotated rounds, us, against the rows below: 2
  // ranks 8 B-128 B 0.39 / 0.46-0.48, 64K 3.0 / 4.1, 256K 9.6 / 10.3, 512K 24.4 / 13.3; 3
  // ranks 64K 3.2 / 3.3, 128K 5.5 / 7.1, 1M 34 / 122; 4 ranks 8-256 B 0.22-0.24 / 0.17-0.21,
  // 32K 1.8 / 1.9, 64K 3.1 / 4.0, 256K 14.7 / 39.6, 4M 246 / 486; 8 ranks 16K 0.85 / 1.6, 1M
  // 57 / 131). Above 8 ranks not measured. At 2 ranks from 512K one CMA copy by the receiver
  // beats two plain copies that the two ranks make in turn.
  {CK::Bcast,     MemType::Host, 2, 2,         RankClass::Any,     0,     512*K, "shm"},
  {CK::Bcast,     MemType::Host, 3, 3,         RankClass::Any,     128*K, kInf,  "shm"},
  {CK::Bcast,     MemType::Host, 4, 4,         RankClass::Any,     64*K,  kInf,  "shm"},
  {CK::Bcast,     MemType::Host, 5, 8,         RankClass::Any,     16*K,  kInf,  "shm"},
  // Linear sends 16K pieces, eagerly, below 256K: the root never waits for a receiver. From 256K
  // one message per peer, every receiver copying from the root at once: ahead of binomial at 4
  // and 8 ranks up to 4M (4 ranks 1M: 115-180 / 158-220 us), behind it at 3 from 512K.
  {CK::Bcast,     MemType::Host, 3, 8,         RankClass::Any,     0,     256*K, "linear"},
  {CK::Bcast,     MemType::Host, 4, 8,         RankClass::Any,     256*K, kInf,  "linear"},
  {CK::Bcast,     MemType::Host, 1, kAnyRanks, RankClass::Any,     0,     kInf,  "binomial"},

  // 4..8 ranks below 256K: linear, every non-root sends and leaves (4 ranks, 8 B-4K:
  // 2.3-2.8 us, binomial 2.7-4.1; 8 ranks 2.5-3.5 / 5.6-8.9; 128K: 32 / 35 and 61 / 102).
  // 3 ranks: binomial is already flat (0 <- 1, 0 <- 2).
  // Blocking calls of a communicator on one node, through its shared segment where that beats
  // the messages. shm (the pipeline): 2 ranks 256K: 30-34 / 46-47 us, 4M: 371-393 / 284-309;
  // 9+ ranks from 256K as measured at 8 (208 / 229 us) before shm_flat took 3-8. shm_flat:
  // every rank copies in, the root reduces all copies, non-roots go on at once (2 ranks 1K:
  // 0.18 / 0.35 us; 3 ranks 64K: 9.2 / 17.5, 1M: 65 / 137; 4 ranks 16 B: 1.69 / 1.77, 128K:
  // 8.8 / 24.4, 4M: 1557 / 2583; 8 ranks 2M: 521 / 2031; behind at 2 ranks from 8K and 4 ranks
  // 8K-16K: 3.2-4.6 / 3.0-3.7).
  // With single copies from a few KiB (kShapeSingleCopy, as for bcast) binomial at 2 ranks from
  // 8K (16K 1.38 / 2.12 us, 128K 6.3 / 12.0, 512K 26.8 / 49.1 with CMA split from 1M; Open MPI
  // 1.59, 6.62, 24.95).
  {CK::Reduce,    MemType::Host, 2, 2,         RankClass::Any,     8*K,   kInf,  "binomial", kShapeSingleCopy},
  // At 4 ranks shm_flat at 8K-32K too, not linear (whose messages are rendezvous there): 8K
  // 2.4 / 6.1 us, 16K 2.9 / 7.6.
  {CK::Reduce,    MemType::Host, 4, 4,         RankClass::Any,     8*K,   32*K,  "shm_flat", kShapeSingleCopy},
  {CK::Reduce,    MemType::Host, 2, 2,         RankClass::Any,     0,     8*K,   "shm_flat"},
  {CK::Reduce,    MemType::Host, 4, 4,         RankClass::Any,     8*K,   32*K,  "linear"},
  {CK::Reduce,    MemType::Host, 3, 8,         RankClass::Any,     0,     kInf,  "shm_flat"},
  {CK::Reduce,    MemType::Host, 2, 2,         RankClass::Any,     256*K, 1*M,   "shm"},
  {CK::Reduce,    MemType::Host, 5, kAnyRanks, RankClass::Any,     256*K, kInf,  "shm"},
  {CK::Reduce,    MemType::Host, 4, 8,         RankClass::Any,     0,     256*K, "linear"},
  {CK::Reduce,    MemType::Host, 1, 4,         RankClass::Any,     0,     kInf,  "binomial"},
  {CK::Reduce,    MemType::Host, 3, kAnyRanks, RankClass::Any,     0,     64*K,  "binomial"},
  {CK::Reduce,    MemType::Host, 3, kAnyRanks, RankClass::Any,     64*K,  kInf,  "rabenseifner"},
  {CK::Reduce,    MemType::Host, 1, kAnyRanks, RankClass::Any,     0,     kInf,  "binomial"},

  {CK::Allreduce, MemType::Host, 3, kAnyRanks, RankClass::Any,     0,     1*M,   "hierarchical"},
  // Blocking calls of a communicator on one node: through its shared segment from where that
  // beats the messages (2 ranks from 32K since the fold's 128K chunks: 64K 5.7 / 8.9 us,
  // 128K 10.1 / 14.1, 32K 3.7 / 4.0, 16K 3.3 / 2.7, medians of 5 rotated rounds against
  // Rabenseifner; 256K: 17-18 / 21-25 us, 4M: 291-387 / 450-456; 4 ranks 8K:
  // 7.4-10.4 / 10.2-10.4, 4M: 1086-1288 / 2064-2100; 3 ranks from 16K, 8 from 8K).
  // shm_flat below: one round of waits, every rank reducing all p copies (2 ranks 8 B: 0.22-0.26
  // / 0.32-0.38 us; 3 ranks 512 B: 2.8 / 3.7; 4 ranks 16K: 11.5 / 12.7 (the pipeline); 8 ranks
  // 4K: 13.4 / 19.8).
  {CK::Allreduce, MemType::Host, 2, 2,         RankClass::Any,     0,     2*K,   "shm_flat"},
  {CK::Allreduce, MemType::Host, 3, 3,         RankClass::Any,     0,     16*K,  "shm_flat"},
  {CK::Allreduce, MemType::Host, 4, 4,         RankClass::Any,     0,     32*K,  "shm_flat"},
  {CK::Allreduce, MemType::Host, 5, 8,         RankClass::Any,     0,     8*K,   "shm_flat"},
  {CK::Allreduce, MemType::Host, 2, 2,         RankClass::Any,     32*K,  kInf,  "shm"},
  {CK::Allreduce, MemType::Host, 3, 3,         RankClass::Any,     16*K,  kInf,  "shm"},
  {CK::Allreduce, MemType::Host, 4, kAnyRanks, RankClass::Any,     8*K,   kInf,  "shm"},
  {CK::Allreduce, MemType::Host, 1, kAnyRanks, RankClass::Any,     0,     16*K,  "recursive_doubling"},
  // 2 ranks from 512K: ring. Rabenseifner's one message of n/2 goes by CMA from there (256K),
  // the ring's segments through the rings (512K: 48 / 74 us, and 89 / 190 in a slow spell).
  {CK::Allreduce, MemType::Host, 1, 2,         RankClass::Any,     16*K,  512*K, "rabenseifner"},
  {CK::Allreduce, MemType::Host, 1, 2,         RankClass::Any,     512*K, kInf,  "ring"},
  {CK::Allreduce, MemType::Host, 3, kAnyRanks, RankClass::Any,     16*K,  kInf,  "rabenseifner"},
  {CK::Allreduce, MemType::Host, 1, kAnyRanks, RankClass::Any,     0,     kInf,  "recursive_doubling"},

  // 3..8 ranks from 16K: every block posted at once (4 ranks, 256K / 1M: 195 / 910 us, ring
  // 408 / 1173; 8 ranks 256K: 1051 / 2368), as for alltoall.
  // Blocking calls of a communicator on one node, through its shared segment where that beats
  // the messages (2 ranks 256K: 22-24 / 38 us, 4M: 696-803 / 946-974, behind at 8K-64K; 4
  // ranks 4K: 4.2-8.6 / 7.6-12.1, 1M: 510-929 / 758-996 in 5 runs, 4M ahead in 4 of 5; 3 ranks
  // 1K-4M ahead but at 16K). 2 ranks below 4K: shm steadier and mostly ahead (8 B-2K:
  // 0.20-0.48 / 0.19-0.66 us in 4 rotated rounds, 25-35% ahead in 3 of them; 4K: 0.86-0.93 /
  // 0.59-0.86). 3..8 ranks below 1K too (medians of 3 rotated rounds on 2026-12-08, 8-512 B:
  // 3 ranks 1.3-1.9 / 2.5-3.1 us (Bruck), 4 ranks 1.9-2.3 / 3.4-4.0 (recursive doubling; Open MPI
  // 2.4-5.1), 8 ranks 8.9-9.4 / 10.4-16.9; an older run had 4 ranks behind: 5.6-6.6 / 4.9-5.6).
  // With single copies from a few KiB (kShapeSingleCopy): at 2 ranks the ring (one exchange)
  // from 4K (16K 1.95 / 3.24 us, 128K 8.1 / 19.9, 4M 675 / 884; Open MPI 2.70, 8.88, 621).
  // Recursive doubling, the same exchange, was slower there (16K 5.1 us): not found why.
  {CK::Allgather, MemType::Host, 2, 2,         RankClass::Any,     4*K,   kInf,  "ring", kShapeSingleCopy},
  {CK::Allgather, MemType::Host, 2, 2,         RankClass::Any,     0,     4*K,   "shm"},
  {CK::Allgather, MemType::Host, 2, 2,         RankClass::Any,     256*K, kInf,  "shm"},
  {CK::Allgather, MemType::Host, 3, 8,         RankClass::Any,     0,     kInf,  "shm"},
  {CK::Allgather, MemType::Host, 3, 8,         RankClass::Any,     16*K,  kInf,  "scattered"},
  {CK::Allgather, MemType::Host, 1, kAnyRanks, RankClass::Pow2,    0,     64*K,  "recursive_doubling"},
  {CK::Allgather, MemType::Host, 1, kAnyRanks, RankClass::NonPow2, 0,     16*K,  "bruck"},
  {CK::Allgather, MemType::Host, 1, kAnyRanks, RankClass::Any,     0,     kInf,  "ring"},

  // As allgather (the same code; bytes here: the average block).
  {CK::Allgatherv, MemType::Host, 2, 2,        RankClass::Any,     4*K,   kInf,  "ring", kShapeSingleCopy},
  {CK::Allgatherv, MemType::Host, 2, 2,        RankClass::Any,     0,     4*K,   "shm"},
  {CK::Allgatherv, MemType::Host, 2, 2,        RankClass::Any,     256*K, kInf,  "shm"},
  {CK::Allgatherv, MemType::Host, 3, 8,        RankClass::Any,     0,     kInf,  "shm"},
  {CK::Allgatherv, MemType::Host, 3, 8,        RankClass::Any,     16*K,  kInf,  "scattered"},
  {CK::Allgatherv, MemType::Host, 1, kAnyRanks, RankClass::Pow2,   0,     16*K,  "recursive_doubling"},
  {CK::Allgatherv, MemType::Host, 1, kAnyRanks, RankClass::Any,    0,     kInf,  "ring"},

  // Blocking calls of a communicator on one node, through its shared segment where that beats
  // the messages (medians of 3; 2 ranks 16 B-2K: 0.20-0.44 / 0.28-0.82 us, 256K-4M: 23-1146 /
  // 41-1585, pairwise ahead at 8K-128K then (not since: below); 3 ranks 64K: 18 / 28; 4 ranks 16 B: 3.0 / 4.8, 128K:
  // 42 / 79, 4M: 5622 / 5977; 8 ranks below 256K ahead but at 16K, from 256K behind: 41208 /
  // 28657 at 4M, whose slots are a quarter of 2 ranks').
  // 2 ranks 8K-128K, 5 rotated rounds on 2026-12-07 against forced pairwise: 8K 1.42 / 1.63,
  // 32K 3.21 / 4.59, 128K 10.2 / 16.0 (the table then had pairwise there and was at 0.86 of
  // Open MPI at 128K) -> shm at every size.
  // With single copies from a few KiB (kShapeSingleCopy): pairwise at 2 ranks from 8K (16K
  // 2.00 / 3.56 us, 512K 42.8 / 91.7; Open MPI 2.61, 54.1; 4K 1.33 / 1.13), scattered at 4 ranks
  // from 256K (512K 365 / 484, 1M 697 / 958; Open MPI 415, 689; 64K-128K even).
  {CK::Alltoall,  MemType::Host, 2, 2,         RankClass::Any,     8*K,   kInf,  "pairwise", kShapeSingleCopy},
  {CK::Alltoall,  MemType::Host, 4, 4,         RankClass::Any,     256*K, kInf,  "scattered", kShapeSingleCopy},
  {CK::Alltoall,  MemType::Host, 2, 2,         RankClass::Any,     0,     kInf,  "shm"},
  {CK::Alltoall,  MemType::Host, 3, 4,         RankClass::Any,     0,     kInf,  "shm"},
  {CK::Alltoall,  MemType::Host, 5, 8,         RankClass::Any,     0,     256*K, "shm"},
  // 3..8 ranks: scattered at every size (4 ranks, 16 B-1K: 5.8-6.8 us, Bruck 8.7-11.8; 3 ranks
  // 4.4-5.4 / 7.0-8.2; 8 ranks 18.5-28.1 / 30.2-41.9); Bruck for small blocks beyond.
  {CK::Alltoall,  MemType::Host, 3, 8,         RankClass::Any,     0,     kInf,  "scattered"},
  {CK::Alltoall,  MemType::Host, 9, kAnyRanks, RankClass::Any,     0,     1*K,   "bruck"},
  {CK::Alltoall,  MemType::Host, 1, kAnyRanks, RankClass::Any,     0,     kInf,  "pairwise"},

  {CK::Alltoallv, MemType::Host, 1, kAnyRanks, RankClass::Any,     0,     kInf,  "pairwise"},

  {CK::Gather,    MemType::Host, 1, kAnyRanks, RankClass::Any,     0,     kInf,  "binomial"},
  {CK::Gatherv,   MemType::Host, 1, kAnyRanks, RankClass::Any,     0,     kInf,  "linear"},
  {CK::Scatter,   MemType::Host, 1, kAnyRanks, RankClass::Any,     0,     kInf,  "binomial"},
  {CK::Scatterv,  MemType::Host, 1, kAnyRanks, RankClass::Any,     0,     kInf,  "linear"},

  // Blocking calls of a communicator on one node, through its shared segment where that beats
  // the messages (bytes here: per rank; medians of 3, float sums, us: 2 ranks 16 B-8K total:
  // 0.22-1.08 / 0.33-1.11, 1M-4M: 51-258 / 73-310, and since the fold's 128K chunks 16K-32K
  // total even (1.74 / 1.70), 64K-256K ahead (64K 3.6 / 6.5, 256K 13.0 / 14.2; before them
  // behind: 128K 14.4 / 10.8); 3 ranks ahead from 32K total (64K: 10.4 / 22.0), within noise
  // below; 4 ranks 16 B: 4.9 / 6.6, 256K: 39 / 101; 8 ranks 1.4-3.2x ahead at every size).
  {CK::ReduceScatter, MemType::Host, 2, 8,     RankClass::Any,     0,     kInf,  "shm"},
  {CK::ReduceScatter, MemType::Host, 1, kAnyRanks, RankClass::Any, 0,     64*K,  "recursive_halving"},
  {CK::ReduceScatter, MemType::Host, 1, kAnyRanks, RankClass::Any, 64*K,  kInf,  "ring"},
  {CK::ReduceScatter, MemType::Host, 1, kAnyRanks, RankClass::Any, 0,     kInf,  "reduce_scatterv"},

  {CK::Scan,      MemType::Host, 1, kAnyRanks, RankClass::Any,     0,     kInf,  "recursive_doubling"},
  {CK::Exscan,    MemType::Host, 1, kAnyRanks, RankClass::Any,     0,     kInf,  "recursive_doubling"},
};
// clang-format on

// A size tunable of at least 64 bytes, or fallback (with a warning) when it is not one.
size_t sizeSetting(config::Tunable t, const char* env, size_t fallback, const char* shown) {
  const std::string& v = config::value(t);
  uint64_t s = 0;
  if (config::parseSize(v, &s) == Status::Ok && s >= 64) return s;
  RRT_WARN("%s=%s: not a size of at least 64 bytes; using %s", env, v.c_str(), shown);
  return fallback;
}

struct Overrides {
  const Algorithm* forced[kCollKinds] = {};
  size_t segment = 64 * K;
  size_t shmSlot = 2 * M;
  size_t shmSharedOutput = 256 * K;
  bool loaded = false;
  void load() {
    for (int k = 0; k < kCollKinds; ++k) {
      forced[k] = nullptr;
      const std::string& v = config::value(kKinds[k].tunable);
      if (v.empty() || strcasecmp(v.c_str(), "auto") == 0) continue;
      forced[k] = findAlgorithm(static_cast<CollKind>(k), v.c_str());
      if (!forced[k]) RRT_WARN("%s=%s: no such algorithm; using the table", kKinds[k].env, v.c_str());
    }
    segment = sizeSetting(config::Tunable::CollSegment, "RRT_COLL_SEGMENT", 64 * K, "64K");
    shmSlot = sizeSetting(config::Tunable::CollShmSlot, "RRT_COLL_SHM_SLOT", 2 * M, "2M");
    const std::string& so = config::value(config::Tunable::CollShmSharedOutput);
    uint64_t bytes = 0;
    shmSharedOutput = config::parseSize(so, &bytes) == Status::Ok ? bytes : 256 * K;
    if (shmSharedOutput != bytes)
      RRT_WARN("RRT_COLL_SHM_SHARED_OUTPUT=%s: not a size; using 256K", so.c_str());
    loaded = true;
  }
};

Overrides& overrides() {
  static Overrides o;
  if (!o.loaded) o.load();
  return o;
}

bool ranksMatch(const Rule& r, int ranks) {
  if (ranks < r.minRanks || ranks > r.maxRanks) return false;
  switch (r.ranks) {
    case RankClass::Any: return true;
    case RankClass::Pow2: return isPow2(ranks);
    case RankClass::NonPow2: return !isPow2(ranks);
  }
  return false;
}

bool canRun(const Algorithm* a, bool commutative, unsigned shape) {
  if (!a || (!commutative && (a->flags & kNeedsCommutative))) return false;
  const unsigned shared = kShapeSharedMemory | kShapeDirect;
  return !(a->flags & kSharedMemory) || (shape & shared) == shared;
}

// The table picks a node-aware algorithm only for a communicator worth a hierarchy (forcing one
// through RRT_COLL_<NAME> runs it anywhere: on one node it is a reduce + bcast).
bool tableMayPick(const Algorithm* a, bool commutative, unsigned shape) {
  return canRun(a, commutative, shape) && ((shape & kShapeNodeAware) || !(a->flags & kNodeAware));
}

bool isReduction(CollKind k) {
  return k == CK::Reduce || k == CK::Allreduce || k == CK::ReduceScatter || k == CK::Scan ||
         k == CK::Exscan;
}

void printSize(FILE* out, size_t b) {
  if (b == kInf) fprintf(out, "inf");
  else if (b >= M && b % M == 0) fprintf(out, "%zuM", b / M);
  else if (b >= K && b % K == 0) fprintf(out, "%zuK", b / K);
  else fprintf(out, "%zu", b);
}

}  // namespace

const char* kindName(CollKind k) { return kKinds[static_cast<int>(k)].name; }
const char* kindEnvName(CollKind k) { return kKinds[static_cast<int>(k)].env; }

const Algorithm* findAlgorithm(CollKind kind, const char* name) {
  for (const Algorithm& a : kAlgorithms)
    if (a.kind == kind && strcasecmp(a.name, name) == 0) return &a;
  return nullptr;
}

int algorithmsOf(CollKind kind, const Algorithm** out, int max) {
  int n = 0;
  for (const Algorithm& a : kAlgorithms)
    if (a.kind == kind && n < max) out[n++] = &a;
  return n;
}

size_t selectionBytes(const CollArgs& a, int ranks) {
  auto average = [ranks](const std::vector<size_t>& v) {
    size_t sum = 0;
    for (size_t b : v) sum += b;
    return v.empty() ? 0 : sum / static_cast<size_t>(ranks);
  };
  switch (a.kind) {
    case CK::Barrier: return 0;
    case CK::Bcast: case CK::Reduce: case CK::Allreduce: case CK::Scan: case CK::Exscan:
      return a.count * a.typeSize;
    case CK::Allgather: case CK::Alltoall: case CK::Gather: case CK::Scatter:
      return a.blockBytes;
    case CK::Allgatherv: case CK::Gatherv: case CK::ReduceScatter: return average(a.recvBytes);
    case CK::Alltoallv: case CK::Scatterv: return average(a.sendBytes);
    case CK::Count: break;
  }
  return 0;
}

namespace {

// The rules of each collective, in table order, with their algorithms resolved once by name: a
// call's selection compares no strings and walks only its own collective's few rules (walking
// the whole table cost ~130 instructions per collective).
constexpr size_t kRuleCount = sizeof(kRules) / sizeof(kRules[0]);
struct KindRules {
  const Rule* rule[kRuleCount];
  const Algorithm* algo[kRuleCount];
  size_t n = 0;
};
const KindRules* rulesByKind() {
  static KindRules byKind[kCollKinds];
  static bool done = false;
  if (!done) {
    for (const Rule& r : kRules) {
      KindRules& k = byKind[static_cast<int>(r.kind)];
      k.rule[k.n] = &r;
      k.algo[k.n++] = findAlgorithm(r.kind, r.algorithm);
    }
    done = true;
  }
  return byKind;
}

}  // namespace

const Algorithm* selectFromTable(CollKind kind, size_t bytes, int ranks, MemType mem,
                                 bool commutative, unsigned shape) {
  const KindRules& k = rulesByKind()[static_cast<int>(kind)];
  for (size_t i = 0; i < k.n; ++i) {
    const Rule& r = *k.rule[i];
    if (r.mem != mem || !ranksMatch(r, ranks)) continue;
    if (bytes < r.minBytes || bytes >= r.maxBytes || (shape & r.shapes) != r.shapes) continue;
    const Algorithm* a = k.algo[i];
    if (tableMayPick(a, commutative, shape)) return a;
  }
  // No rule for this memory type: the host rules (reductions of device memory are staged).
  if (mem != MemType::Host)
    return selectFromTable(kind, bytes, ranks, MemType::Host, commutative, shape);
  return nullptr;
}

namespace {
// The table's last answer per collective kind: a program repeats its collectives, and a hit
// costs a few compares instead of the walk over the kind's rules (80 instructions saved per
// call: 1433 -> 1353 for an 8-byte bcast's root). The rules never change, so neither does an
// answer.
struct Memo {
  size_t bytes = 0;
  int ranks = 0;
  MemType mem = MemType::Host;
  bool commutative = false;
  unsigned shape = 0;
  const Algorithm* algo = nullptr;  // nullptr: empty
};
Memo gMemo[kCollKinds];
}  // namespace

const Algorithm* select(const CollArgs& args, int ranks, unsigned shape) {
  const bool commutative = !isReduction(args.kind) || args.reducer.commutative;
  const Algorithm* forced = overrides().forced[static_cast<int>(args.kind)];
  if (canRun(forced, commutative, shape)) return forced;
  const size_t bytes = selectionBytes(args, ranks);
  Memo& m = gMemo[static_cast<int>(args.kind)];
  if (m.algo && m.bytes == bytes && m.ranks == ranks && m.mem == args.memType &&
      m.commutative == commutative && m.shape == shape)
    return m.algo;
  const Algorithm* a =
      selectFromTable(args.kind, bytes, ranks, args.memType, commutative, shape);
  if (a) m = Memo{bytes, ranks, args.memType, commutative, shape, a};
  return a;
}

void reloadSelection() {
  config::reload();
  overrides().load();
}
size_t segmentBytes() { return overrides().segment; }
size_t shmSlotBytes() { return overrides().shmSlot; }
size_t shmSharedOutputBytes() { return overrides().shmSharedOutput; }

size_t localSingleCopyFrom() {
  return p2p().localSingleCopyFrom ? p2p().localSingleCopyFrom() : SIZE_MAX;
}
bool singleCopyMidSizes() { return localSingleCopyFrom() <= kSingleCopyShapeBytes; }

void printSelection(FILE* out) {
  Overrides& o = overrides();
  fprintf(out, "collective algorithms (RRT_COLL_<NAME>=<algorithm> forces one; sizes are "
               "bytes per rank)\n");
  fprintf(out, "  segment of pipelined algorithms: %zu bytes (RRT_COLL_SEGMENT)\n", o.segment);
  fprintf(out, "  slot of the shared-memory algorithms: %zu bytes per rank (RRT_COLL_SHM_SLOT)\n",
          o.shmSlot);
  fprintf(out, "  shm allreduce: peers read a shared (rrt_alloc_mem) output from %zu bytes x "
               "ranks^2, shm allgather from blocks of 4x that (RRT_COLL_SHM_SHARED_OUTPUT)\n",
          o.shmSharedOutput);
  fprintf(out, "  reduction kernels: %s build (RRT_KERNELS)\n", kernelIsaName(kernelIsa()));
  const size_t single = localSingleCopyFrom();
  const unsigned oneNode =
      kShapeSharedMemory | kShapeDirect | (singleCopyMidSizes() ? kShapeSingleCopy : 0u);
  if (single == SIZE_MAX)
    fprintf(out, "  messages on one node: no single copy (CMA)\n");
  else
    fprintf(out, "  messages on one node: single copy (CMA) from %zu bytes%s\n", single,
            oneNode & kShapeSingleCopy ? ": the rows for single-copy machines apply" : "");
  for (int k = 0; k < kCollKinds; ++k) {
    const CollKind kind = static_cast<CollKind>(k);
    fprintf(out, "%s (%s=%s)\n", kKinds[k].name, kKinds[k].env,
            o.forced[k] ? o.forced[k]->name : "auto");
    for (const Algorithm& a : kAlgorithms)
      if (a.kind == kind)
        fprintf(out, "    %-20s %s%s%s%s\n", a.name, a.cost,
                a.flags & kNeedsCommutative ? " [commutative ops only]" : "",
                a.flags & kNodeAware ? " [table: only across nodes]" : "",
                a.flags & kSharedMemory ? " [blocking calls of a one-node communicator only]"
                : a.direct              ? " [blocking calls: direct form]"
                                        : "");
    // The choice per size range at a few rank counts, for blocking calls of a communicator on
    // one node (non-blocking ones skip the shared-memory rows): the boundaries of the rules.
    const int kRanks[] = {2, 3, 4, 8, 16};
    for (int p : kRanks) {
      fprintf(out, "  p=%-3d", p);
      std::vector<size_t> edges{0};
      for (const Rule& r : kRules)
        if (r.kind == kind && ranksMatch(r, p)) {
          edges.push_back(r.minBytes);
          if (r.maxBytes != kInf) edges.push_back(r.maxBytes);
        }
      std::sort(edges.begin(), edges.end());
      edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
      for (size_t i = 0; i < edges.size(); ++i) {
        const size_t hi = i + 1 < edges.size() ? edges[i + 1] : kInf;
        const Algorithm* a =
            o.forced[k] ? o.forced[k]
                        : selectFromTable(kind, edges[i], p, MemType::Host, true, oneNode);
        fprintf(out, " [");
        printSize(out, edges[i]);
        fprintf(out, ",");
        printSize(out, hi);
        fprintf(out, ") %s", a ? a->name : "-");
        if (kind == CK::Barrier) break;
      }
      fprintf(out, "\n");
    }
  }
}

}  // namespace rrt::coll
