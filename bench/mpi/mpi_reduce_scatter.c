/* mpi_reduce_scatter: the MPI twin of apps/rrt_reduce_scatter.cc (Reduce_scatter latency, OSU's
 * method). */
#include "mpi_common.h"

static void run(const struct coll_args *a) {
  mpi_check(MPI_Reduce_scatter(a->send, a->recv, a->int_counts, mpi_type(a->dtype), MPI_SUM,
                               MPI_COMM_WORLD),
            "MPI_Reduce_scatter");
}

int main(int argc, char **argv) {
  struct coll_bench bench = {"mpi_reduce_scatter",
                             "Reduce_scatter Latency Test",
                             BENCH_COLL,
                             COLL_ONE_BLOCK,
                             COLL_ONE_BLOCK,
                             1,
                             run};
  return mpi_coll_main(argc, argv, bench);
}
