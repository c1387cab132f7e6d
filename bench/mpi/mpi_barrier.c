/* mpi_barrier: the MPI twin of apps/rrt_barrier.cc (Barrier latency, OSU's method). */
#include "mpi_common.h"

static void run(const struct coll_args *a) {
  (void)a; /* no data */
  mpi_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

int main(int argc, char **argv) {
  struct coll_bench bench = {
      "mpi_barrier", "Barrier Latency Test", BENCH_BARRIER, COLL_ONE_BLOCK, COLL_ONE_BLOCK, 0, run};
  return mpi_coll_main(argc, argv, bench);
}
