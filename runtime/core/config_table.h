// Every tunable of rrt, one row each: RRT_TUNABLE(id, ENV_SUFFIX, default, help).
// The environment variable is RRT_<ENV_SUFFIX>. "auto" means: computed from the capabilities
// of what was found at run time. rrt_info prints every row with its value and source.
// Sizes accept K, M and G suffixes (powers of two).
// clang-format off
RRT_TUNABLE(Log,             "LOG",              "error", "log level: error, warn, info, debug, trace")
RRT_TUNABLE(Transports,      "TRANSPORTS",       "auto",  "comma list of transports to use besides self (shm, tcp, verbs); auto = all that work")
RRT_TUNABLE(EagerLimit,      "EAGER_LIMIT",      "auto",  "largest message sent eagerly (bytes); above it rendezvous")
RRT_TUNABLE(RndvProto,       "RNDV_PROTO",       "auto",  "rendezvous protocol: auto, get (RGET), put (RPUT), copy (pipelined active messages)")
RRT_TUNABLE(RndvCopyFrag,    "RNDV_COPY_FRAG",   "auto",  "fragment size of the pipelined-copy rendezvous (bytes)")
RRT_TUNABLE(ShmRingBytes,    "SHM_RING_BYTES",   "256K",  "bytes of each per-pair shared-memory ring")
RRT_TUNABLE(ShmCma,          "SHM_CMA",          "auto",  "single-copy rendezvous by process_vm_readv: auto, on, off")
RRT_TUNABLE(ShmCmaThreshold, "SHM_CMA_THRESHOLD","auto",  "smallest message moved by CMA on shared memory (bytes); below it the pipelined copy")
RRT_TUNABLE(SpinCount,       "SPIN_COUNT",       "auto",  "idle polls before a waiting rank starts to yield the CPU (auto: more when ranks <= cores)")
RRT_TUNABLE(Yield,           "YIELD",            "auto",  "yield the CPU while waiting: auto (when oversubscribed or after spinning), on, off")
RRT_TUNABLE(Timeout,         "TIMEOUT",          "0",     "seconds a blocking call may wait without any progress before it fails with RRT_ERR_TIMEOUT (0 = never)")
RRT_TUNABLE(Stats,           "STATS",            "0",     "print messages and bytes per transport at finalize (1 = on)")
RRT_TUNABLE(CollBarrier,      "COLL_BARRIER",        "auto",  "algorithm of barrier (rrt_info lists them); auto = by size and rank count")
RRT_TUNABLE(CollBcast,        "COLL_BCAST",          "auto",  "algorithm of bcast (rrt_info lists them); auto = by size and rank count")
RRT_TUNABLE(CollReduce,       "COLL_REDUCE",         "auto",  "algorithm of reduce (rrt_info lists them); auto = by size and rank count")
RRT_TUNABLE(CollAllreduce,    "COLL_ALLREDUCE",      "auto",  "algorithm of allreduce (rrt_info lists them); auto = by size and rank count")
RRT_TUNABLE(CollAllgather,    "COLL_ALLGATHER",      "auto",  "algorithm of allgather (rrt_info lists them); auto = by size and rank count")
RRT_TUNABLE(CollAllgatherv,   "COLL_ALLGATHERV",     "auto",  "algorithm of allgatherv (rrt_info lists them); auto = by size and rank count")
RRT_TUNABLE(CollAlltoall,     "COLL_ALLTOALL",       "auto",  "algorithm of alltoall (rrt_info lists them); auto = by size and rank count")
RRT_TUNABLE(CollAlltoallv,    "COLL_ALLTOALLV",      "auto",  "algorithm of alltoallv (rrt_info lists them); auto = by size and rank count")
RRT_TUNABLE(CollGather,       "COLL_GATHER",         "auto",  "algorithm of gather (rrt_info lists them); auto = by size and rank count")
RRT_TUNABLE(CollGatherv,      "COLL_GATHERV",        "auto",  "algorithm of gatherv (rrt_info lists them); auto = by size and rank count")
RRT_TUNABLE(CollScatter,      "COLL_SCATTER",        "auto",  "algorithm of scatter (rrt_info lists them); auto = by size and rank count")
RRT_TUNABLE(CollScatterv,     "COLL_SCATTERV",       "auto",  "algorithm of scatterv (rrt_info lists them); auto = by size and rank count")
RRT_TUNABLE(CollReduceScatter, "COLL_REDUCE_SCATTER", "auto",  "algorithm of reduce_scatter (rrt_info lists them); auto = by size and rank count")
RRT_TUNABLE(CollScan,         "COLL_SCAN",           "auto",  "algorithm of scan (rrt_info lists them); auto = by size and rank count")
RRT_TUNABLE(CollExscan,       "COLL_EXSCAN",         "auto",  "algorithm of exscan (rrt_info lists them); auto = by size and rank count")
RRT_TUNABLE(CollSegment,       "COLL_SEGMENT",     "64K",   "segment size of pipelined collective algorithms (bytes, at least 64)")
// clang-format on
