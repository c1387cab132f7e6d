/* mpi_scatter: the MPI twin of apps/rrt_scatter.cc (Scatter latency, OSU's method). */
#include "mpi_common.h"

static void run(const struct coll_args *a) {
  MPI_Datatype type = mpi_type(a->dtype);
  int n = (int)a->count;
  mpi_check(MPI_Scatter(a->send, n, type, a->recv, n, type, 0, MPI_COMM_WORLD), "MPI_Scatter");
}

int main(int argc, char **argv) {
  struct coll_bench bench = {"mpi_scatter",
                             "Scatter Latency Test",
                             BENCH_COLL,
                             COLL_BLOCK_PER_RANK,
                             COLL_ONE_BLOCK,
                             0,
                             run};
  return mpi_coll_main(argc, argv, bench);
}
