/* mpi_bcast: the MPI twin of apps/rrt_bcast.cc (Broadcast latency, OSU's method). */
#include "mpi_common.h"

static void run(const struct coll_args *a) {
  mpi_check(MPI_Bcast(a->send, (int)a->count, mpi_type(a->dtype), 0, MPI_COMM_WORLD), "MPI_Bcast");
}

int main(int argc, char **argv) {
  struct coll_bench bench = {
      "mpi_bcast", "Broadcast Latency Test", BENCH_COLL, COLL_ONE_BLOCK, COLL_ONE_BLOCK, 0, run};
  return mpi_coll_main(argc, argv, bench);
}
