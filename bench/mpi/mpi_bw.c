/* mpi_bw: the MPI twin of apps/rrt_bw.cc (a window of isends, waitall, a small ack: osu_bw). */
#include <stdlib.h>

#include "mpi_common.h"

enum { kDataTag = 100, kAckTag = 101 };

static double measure(const struct pt2pt_args *a) {
  MPI_Request *reqs = malloc(a->window * sizeof *reqs);
  if (!reqs) mpi_check(MPI_ERR_NO_MEM, "malloc");
  int n = (int)a->size;
  double start = 0.0;
  for (size_t i = 0; i < a->skip + a->iters; ++i) {
    if (i == a->skip) start = MPI_Wtime();
    if (a->rank == 0) {
      for (size_t w = 0; w < a->window; ++w)
        mpi_check(MPI_Isend(a->send, n, MPI_CHAR, 1, kDataTag, MPI_COMM_WORLD, &reqs[w]),
                  "MPI_Isend");
      mpi_check(MPI_Waitall((int)a->window, reqs, MPI_STATUSES_IGNORE), "MPI_Waitall");
      mpi_check(MPI_Recv(a->recv, PT2PT_ACK_BYTES, MPI_CHAR, 1, kAckTag, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE),
                "MPI_Recv(ack)");
    } else {
      for (size_t w = 0; w < a->window; ++w)
        mpi_check(MPI_Irecv(a->recv, n, MPI_CHAR, 0, kDataTag, MPI_COMM_WORLD, &reqs[w]),
                  "MPI_Irecv");
      mpi_check(MPI_Waitall((int)a->window, reqs, MPI_STATUSES_IGNORE), "MPI_Waitall");
      mpi_check(MPI_Send(a->send, PT2PT_ACK_BYTES, MPI_CHAR, 0, kAckTag, MPI_COMM_WORLD),
                "MPI_Send(ack)");
    }
  }
  double seconds = MPI_Wtime() - start;
  free(reqs);
  return (double)a->size / 1e6 * (double)(a->iters * a->window) / seconds;
}

int main(int argc, char **argv) {
  struct pt2pt_bench bench = {"mpi_bw", "Bandwidth Test", BENCH_BW, measure};
  return mpi_pt2pt_main(argc, argv, bench);
}
