/* mpi_alltoall: the MPI twin of apps/rrt_alltoall.cc (All-to-All latency, OSU's method). */
#include "mpi_common.h"

static void run(const struct coll_args *a) {
  MPI_Datatype type = mpi_type(a->dtype);
  int n = (int)a->count;
  mpi_check(MPI_Alltoall(a->send, n, type, a->recv, n, type, MPI_COMM_WORLD), "MPI_Alltoall");
}

int main(int argc, char **argv) {
  struct coll_bench bench = {"mpi_alltoall",
                             "All-to-All Latency Test",
                             BENCH_COLL,
                             COLL_BLOCK_PER_RANK,
                             COLL_BLOCK_PER_RANK,
                             0,
                             run};
  return mpi_coll_main(argc, argv, bench);
}
