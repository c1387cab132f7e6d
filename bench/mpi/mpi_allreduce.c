/* mpi_allreduce: the MPI twin of apps/rrt_allreduce.cc (Allreduce latency, OSU's method). */
#include "mpi_common.h"

static void run(const struct coll_args *a) {
  mpi_check(
      MPI_Allreduce(a->send, a->recv, (int)a->count, mpi_type(a->dtype), MPI_SUM, MPI_COMM_WORLD),
      "MPI_Allreduce");
}

int main(int argc, char **argv) {
  struct coll_bench bench = {"mpi_allreduce",
                             "Allreduce Latency Test",
                             BENCH_COLL,
                             COLL_ONE_BLOCK,
                             COLL_ONE_BLOCK,
                             0,
                             run};
  return mpi_coll_main(argc, argv, bench);
}
