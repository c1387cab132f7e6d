/* Topologies: MPI_Dims_create, Cartesian communicators (coords, rank, shift, sub) and
 * distributed graphs built from adjacency lists. */
#include "mtest.h"

int main(int argc, char **argv) {
  mt_init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  int cases[][2] = {{12, 2}, {16, 3}, {7, 2}, {36, 2}, {60, 3}, {1, 3}};
  for (int c = 0; c < 6; c++) {
    int d[3] = {0, 0, 0};
    MPI_Dims_create(cases[c][0], cases[c][1], d);
    say("dims_create(%d,%d): %d %d %d", cases[c][0], cases[c][1], d[0], d[1],
        cases[c][1] > 2 ? d[2] : 0);
  }
  int dfix[2] = {0, 2};
  MPI_Dims_create(8, 2, dfix);
  say("dims_create(8,{0,2}): %d %d", dfix[0], dfix[1]);

  int dims[2] = {0, 0}, periods[2] = {1, 0};
  MPI_Dims_create(size, 2, dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  int status;
  MPI_Topo_test(cart, &status);
  CHECK(status == MPI_CART);
  MPI_Topo_test(MPI_COMM_WORLD, &status);
  CHECK(status == MPI_UNDEFINED);
  int nd, crank, coords[2], d2[2], p2[2], c2[2];
  MPI_Cartdim_get(cart, &nd);
  CHECK(nd == 2);
  MPI_Comm_rank(cart, &crank);
  MPI_Cart_coords(cart, crank, 2, coords);
  MPI_Cart_get(cart, 2, d2, p2, c2);
  CHECK(d2[0] == dims[0] && p2[0] == 1 && p2[1] == 0 && c2[0] == coords[0] && c2[1] == coords[1]);
  int back;
  MPI_Cart_rank(cart, coords, &back);
  CHECK(back == crank);
  int src, dst;
  MPI_Cart_shift(cart, 0, 1, &src, &dst);
  /* exchange along the periodic dimension */
  int v = crank, got = -1;
  MPI_Sendrecv(&v, 1, MPI_INT, dst, 0, &got, 1, MPI_INT, src, 0, cart, MPI_STATUS_IGNORE);
  CHECK(got == src);
  MPI_Cart_shift(cart, 1, 1, &src, &dst);
  CHECK((coords[1] == dims[1] - 1) == (dst == MPI_PROC_NULL));
  CHECK((coords[1] == 0) == (src == MPI_PROC_NULL));
  int wrap[2] = {coords[0] + dims[0], coords[1]};
  MPI_Cart_rank(cart, wrap, &back);
  CHECK(back == crank);
  say("cart %dx%d: ok", dims[0], dims[1]);

  /* rows of the grid */
  int remain[2] = {0, 1};
  MPI_Comm row;
  MPI_Cart_sub(cart, remain, &row);
  int rsize, rrank, rnd;
  MPI_Comm_size(row, &rsize);
  MPI_Comm_rank(row, &rrank);
  MPI_Cartdim_get(row, &rnd);
  CHECK(rsize == dims[1] && rrank == coords[1] && rnd == 1);
  MPI_Comm_free(&row);

  /* dup keeps the topology */
  MPI_Comm cdup;
  MPI_Comm_dup(cart, &cdup);
  MPI_Topo_test(cdup, &status);
  CHECK(status == MPI_CART);
  MPI_Comm_free(&cdup);
  MPI_Comm_free(&cart);

  /* a 1-D grid smaller than the world: the last rank is left out */
  if (size > 1) {
    int d1 = size - 1, p1 = 0;
    MPI_Comm c1;
    MPI_Cart_create(MPI_COMM_WORLD, 1, &d1, &p1, 0, &c1);
    CHECK((rank == size - 1) == (c1 == MPI_COMM_NULL));
    if (c1 != MPI_COMM_NULL) MPI_Comm_free(&c1);
  }

  /* distributed graph: a directed ring with weights */
  int srcs[1] = {(rank + size - 1) % size}, dsts[1] = {(rank + 1) % size};
  int sw[1] = {rank}, dw[1] = {rank + 1};
  MPI_Comm g;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, srcs, sw, 1, dsts, dw, MPI_INFO_NULL, 0, &g);
  int indeg, outdeg, weighted;
  MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted);
  CHECK(indeg == 1 && outdeg == 1 && weighted);
  int s2[1], w2[1], t2[1], tw2[1];
  MPI_Dist_graph_neighbors(g, 1, s2, w2, 1, t2, tw2);
  CHECK(s2[0] == srcs[0] && w2[0] == rank && t2[0] == dsts[0] && tw2[0] == rank + 1);
  MPI_Topo_test(g, &status);
  CHECK(status == MPI_DIST_GRAPH);
  MPI_Comm_free(&g);
  MPI_Comm gu;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, srcs, MPI_UNWEIGHTED, 1, dsts, MPI_UNWEIGHTED,
                                 MPI_INFO_NULL, 0, &gu);
  MPI_Dist_graph_neighbors_count(gu, &indeg, &outdeg, &weighted);
  CHECK(!weighted);
  MPI_Comm_free(&gu);
  say("dist graph: ok");
  return mt_finish();
}
