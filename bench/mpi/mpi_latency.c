/* mpi_latency: the MPI twin of apps/rrt_latency.cc (ping-pong, OSU osu_latency's method). */
#include "mpi_common.h"

enum { kTag = 1 };

static double measure(const struct pt2pt_args *a) {
  double start = 0.0;
  for (size_t i = 0; i < a->skip + a->iters; ++i) {
    if (i == a->skip) start = MPI_Wtime();
    int n = (int)a->size;
    if (a->rank == 0) {
      mpi_check(MPI_Send(a->send, n, MPI_CHAR, 1, kTag, MPI_COMM_WORLD), "MPI_Send");
      mpi_check(MPI_Recv(a->recv, n, MPI_CHAR, 1, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                "MPI_Recv");
    } else {
      mpi_check(MPI_Recv(a->recv, n, MPI_CHAR, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                "MPI_Recv");
      mpi_check(MPI_Send(a->send, n, MPI_CHAR, 0, kTag, MPI_COMM_WORLD), "MPI_Send");
    }
  }
  return (MPI_Wtime() - start) * 1e6 / (2.0 * (double)a->iters);
}

int main(int argc, char **argv) {
  struct pt2pt_bench bench = {"mpi_latency", "Latency Test", BENCH_LATENCY, measure};
  return mpi_pt2pt_main(argc, argv, bench);
}
