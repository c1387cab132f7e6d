/* steady_allocs.sh's MPI case: the v-collectives through rrt's MPI layer, blocking and
 * non-blocking, N times (argv[1]): MPI_Allgatherv, MPI_Alltoallv, MPI_Gatherv, MPI_Scatterv,
 * MPI_Reduce_scatter and MPI_Iallgatherv on doubles, with the results checked each time. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXP 16

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int n = argc > 1 ? atoi(argv[1]) : 10, p, r;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  if (p > MAXP) {
    fprintf(stderr, "mpi_vcoll: at most %d ranks\n", MAXP);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int cnt[MAXP], dsp[MAXP], bad = 0;
  double mine[2] = {r, r + 0.5}, all[2 * MAXP], back[2 * MAXP], sum[2];
  for (int i = 0; i < p; i++) {
    cnt[i] = 2;
    dsp[i] = 2 * i;
  }
  for (int it = 0; it < n; it++) {
    MPI_Allgatherv(mine, 2, MPI_DOUBLE, all, cnt, dsp, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int i = 0; i < p; i++) bad |= all[2 * i] != i || all[2 * i + 1] != i + 0.5;
    MPI_Alltoallv(all, cnt, dsp, MPI_DOUBLE, back, cnt, dsp, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int i = 0; i < p; i++) bad |= back[2 * i] != r || back[2 * i + 1] != r + 0.5;
    MPI_Gatherv(mine, 2, MPI_DOUBLE, back, cnt, dsp, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (r == 0)
      for (int i = 0; i < p; i++) bad |= back[2 * i] != i;
    MPI_Scatterv(all, cnt, dsp, MPI_DOUBLE, sum, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    bad |= sum[0] != r;
    MPI_Reduce_scatter(all, sum, cnt, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    bad |= sum[0] != (double)r * p;
    MPI_Request q;
    MPI_Iallgatherv(mine, 2, MPI_DOUBLE, back, cnt, dsp, MPI_DOUBLE, MPI_COMM_WORLD, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    for (int i = 0; i < p; i++) bad |= back[2 * i] != i;
  }
  if (bad) fprintf(stderr, "mpi_vcoll: rank %d: wrong results\n", r);
  MPI_Finalize();
  return bad;
}
