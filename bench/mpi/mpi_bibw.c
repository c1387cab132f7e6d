/* mpi_bibw: the MPI twin of apps/rrt_bibw.cc (windows both ways at once: osu_bibw). */
#include <stdlib.h>

#include "mpi_common.h"

enum { kTagToOne = 100, kTagToZero = 10 };

static double measure(const struct pt2pt_args *a) {
  MPI_Request *sends = malloc(a->window * sizeof *sends);
  MPI_Request *recvs = malloc(a->window * sizeof *recvs);
  if (!sends || !recvs) mpi_check(MPI_ERR_NO_MEM, "malloc");
  int n = (int)a->size, peer = 1 - a->rank;
  int send_tag = a->rank == 0 ? kTagToOne : kTagToZero;
  int recv_tag = a->rank == 0 ? kTagToZero : kTagToOne;
  double start = 0.0;
  for (size_t i = 0; i < a->skip + a->iters; ++i) {
    if (i == a->skip) start = MPI_Wtime();
    for (size_t w = 0; w < a->window; ++w)
      mpi_check(MPI_Irecv(a->recv, n, MPI_CHAR, peer, recv_tag, MPI_COMM_WORLD, &recvs[w]),
                "MPI_Irecv");
    for (size_t w = 0; w < a->window; ++w)
      mpi_check(MPI_Isend(a->send, n, MPI_CHAR, peer, send_tag, MPI_COMM_WORLD, &sends[w]),
                "MPI_Isend");
    mpi_check(MPI_Waitall((int)a->window, sends, MPI_STATUSES_IGNORE), "MPI_Waitall(send)");
    mpi_check(MPI_Waitall((int)a->window, recvs, MPI_STATUSES_IGNORE), "MPI_Waitall(recv)");
  }
  double seconds = MPI_Wtime() - start;
  free(recvs);
  free(sends);
  return (double)a->size / 1e6 * (double)(a->iters * a->window) * 2.0 / seconds;
}

int main(int argc, char **argv) {
  struct pt2pt_bench bench = {"mpi_bibw", "Bi-Directional Bandwidth Test", BENCH_BW, measure};
  return mpi_pt2pt_main(argc, argv, bench);
}
