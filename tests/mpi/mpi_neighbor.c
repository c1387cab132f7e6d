/* Neighbourhood collectives, the ten calls (blocking and MPI_Ineighbor_*) on a periodic ring
 * (MPI_Cart_create, one dimension), a non-periodic 2-D grid (MPI_PROC_NULL at the edges keeps
 * its slot), a graph (MPI_Graph_create) and a distributed graph whose sources and destinations
 * differ. Block b that rank s sends carries s * 1000 + b * 10 + element; rank 0 prints what it
 * received. Every neighbour occurs once per list (at least 3 ranks): where one rank is both
 * neighbours of a periodic dimension (size 1 or 2), Open MPI 4.1's MPI_Ineighbor_alltoall(v/w)
 * match the blocks in list order while its blocking forms and rrt (MPICH's
 * coll/ring_neighbor_alltoall) deliver the block sent towards +1 into the slot for -1, so the
 * control cannot cover that case. */
#include "mtest.h"

#define MAXN 8
#define SLOT 4 /* ints per receive slot (blocks hold at most 3, the rest is a guard) */

static int rank, size;
static int nsrc, ndst, srcs[MAXN], dsts[MAXN], cart;
static int all_dsts[64][MAXN], all_ndst[64]; /* every rank's destinations */

static void neighbours(MPI_Comm comm) {
  int kind;
  MPI_Topo_test(comm, &kind);
  nsrc = ndst = 0;
  cart = kind == MPI_CART;
  if (cart) {
    int nd;
    MPI_Cartdim_get(comm, &nd);
    for (int d = 0; d < nd; ++d) {
      int s, t;
      MPI_Cart_shift(comm, d, 1, &s, &t);
      srcs[nsrc++] = s;
      srcs[nsrc++] = t;
    }
    ndst = nsrc;
    memcpy(dsts, srcs, sizeof srcs);
  } else if (kind == MPI_GRAPH) {
    MPI_Graph_neighbors_count(comm, rank, &nsrc);
    MPI_Graph_neighbors(comm, rank, MAXN, srcs);
    ndst = nsrc;
    memcpy(dsts, srcs, sizeof srcs);
  } else {
    int w;
    MPI_Dist_graph_neighbors_count(comm, &nsrc, &ndst, &w);
    MPI_Dist_graph_neighbors(comm, MAXN, srcs, MPI_UNWEIGHTED, MAXN, dsts, MPI_UNWEIGHTED);
  }
  int mine[MAXN + 1];
  mine[0] = ndst;
  memcpy(mine + 1, dsts, sizeof dsts);
  int all[64 * (MAXN + 1)];
  MPI_Allgather(mine, MAXN + 1, MPI_INT, all, MAXN + 1, MPI_INT, comm);
  for (int r = 0; r < size; ++r) {
    all_ndst[r] = all[r * (MAXN + 1)];
    memcpy(all_dsts[r], all + r * (MAXN + 1) + 1, sizeof all_dsts[r]);
  }
}

/* The block that the source of slot i sends to this rank: on a Cartesian grid the one it sends
 * the other way along the same dimension (also where one rank is both neighbours); elsewhere
 * the one of its destination list that is this rank. */
static int block_from(int i) {
  const int s = srcs[i];
  if (cart) return i ^ 1;
  for (int b = 0; b < all_ndst[s]; ++b)
    if (all_dsts[s][b] == rank) return b;
  return -1;
}
static int count_of(int s, int b) { return (s + b) % 3 + 1; } /* v forms: 1..3 elements */

/* Checks slot i of recv (SLOT ints each, at slot i) and appends it to line. */
static void check_slot(const char *what, const int *recv, int i, int n, int allgather, char *line) {
  const int s = srcs[i];
  char part[64] = "";
  for (int j = 0; j < SLOT; ++j) {
    int want = -1;
    if (s != MPI_PROC_NULL && j < n)
      want = allgather ? s * 1000 + j : s * 1000 + block_from(i) * 10 + j;
    if (recv[i * SLOT + j] != want) {
      fprintf(stderr, "[rank %d] %s slot %d elt %d: %d want %d\n", rank, what, i, j,
              recv[i * SLOT + j], want);
      CHECK(0);
    }
    if (want != -1)
      snprintf(part + strlen(part), sizeof part - strlen(part), "%s%d", j ? "," : "", want);
  }
  snprintf(line + strlen(line), 512 - strlen(line), " [%s]", s == MPI_PROC_NULL ? "null" : part);
}

static void fill(int *recv) {
  for (int j = 0; j < MAXN * SLOT; ++j) recv[j] = -1;
}

static void run(MPI_Comm comm, const char *name) {
  neighbours(comm);
  int send[MAXN * SLOT], recv[MAXN * SLOT], rcounts[MAXN], rdispls[MAXN], scounts[MAXN],
      sdispls[MAXN];
  MPI_Aint sdw[MAXN], rdw[MAXN];
  MPI_Datatype stypes[MAXN], rtypes[MAXN], every2nd;
  MPI_Type_vector(2, 1, 2, MPI_INT, &every2nd);
  MPI_Type_commit(&every2nd);
  char line[512];
  for (int nb = 0; nb < 2; ++nb) {
    const char *mode = nb ? "i" : "";
    MPI_Request req = MPI_REQUEST_NULL;
#define CALL(blocking, nonblocking) \
  do {                              \
    if (nb) {                       \
      nonblocking;                  \
      MPI_Wait(&req, MPI_STATUS_IGNORE); \
    } else {                        \
      blocking;                     \
    }                               \
  } while (0)

    /* allgather: 2 ints to every neighbour */
    for (int j = 0; j < 2; ++j) send[j] = rank * 1000 + j;
    fill(recv);
    CALL(MPI_Neighbor_allgather(send, 2, MPI_INT, recv, 2, MPI_INT, comm),
         MPI_Ineighbor_allgather(send, 2, MPI_INT, recv, 2, MPI_INT, comm, &req));
    /* recvcount 2 lays slots 2 apart: spread them to SLOT for checking */
    {
      int tmp[MAXN * SLOT];
      fill(tmp);
      for (int i = 0; i < nsrc; ++i) memcpy(tmp + i * SLOT, recv + i * 2, 2 * sizeof(int));
      snprintf(line, sizeof line, "%s %sneighbor_allgather:", name, mode);
      for (int i = 0; i < nsrc; ++i) check_slot(line, tmp, i, 2, 1, line);
      say("%s", line);
    }

    /* allgatherv: 3 ints, into slots SLOT apart in reverse order */
    for (int j = 0; j < 3; ++j) send[j] = rank * 1000 + j;
    for (int i = 0; i < nsrc; ++i) {
      rcounts[i] = 3;
      rdispls[i] = i * SLOT;
    }
    fill(recv);
    CALL(MPI_Neighbor_allgatherv(send, 3, MPI_INT, recv, rcounts, rdispls, MPI_INT, comm),
         MPI_Ineighbor_allgatherv(send, 3, MPI_INT, recv, rcounts, rdispls, MPI_INT, comm, &req));
    snprintf(line, sizeof line, "%s %sneighbor_allgatherv:", name, mode);
    for (int i = 0; i < nsrc; ++i) check_slot(line, recv, i, 3, 1, line);
    say("%s", line);

    /* alltoall: block b (SLOT ints) to destination b */
    for (int b = 0; b < ndst; ++b)
      for (int j = 0; j < SLOT; ++j) send[b * SLOT + j] = j < 3 ? rank * 1000 + b * 10 + j : -1;
    fill(recv);
    /* 3 of SLOT ints: one element of a type of 3 ints resized to SLOT ints */
    MPI_Datatype c3, slot3;
    MPI_Type_contiguous(3, MPI_INT, &c3);
    MPI_Type_create_resized(c3, 0, SLOT * (MPI_Aint)sizeof(int), &slot3);
    MPI_Type_commit(&slot3);
    MPI_Type_free(&c3);
    CALL(MPI_Neighbor_alltoall(send, 1, slot3, recv, 1, slot3, comm),
         MPI_Ineighbor_alltoall(send, 1, slot3, recv, 1, slot3, comm, &req));
    MPI_Type_free(&slot3);
    snprintf(line, sizeof line, "%s %sneighbor_alltoall:", name, mode);
    for (int i = 0; i < nsrc; ++i) check_slot(line, recv, i, 3, 0, line);
    say("%s", line);

    /* alltoallv: block b has count_of(rank, b) ints */
    for (int b = 0; b < ndst; ++b) {
      scounts[b] = count_of(rank, b);
      sdispls[b] = b * SLOT;
    }
    for (int i = 0; i < nsrc; ++i) {
      rcounts[i] = srcs[i] == MPI_PROC_NULL ? 3 : count_of(srcs[i], block_from(i));
      rdispls[i] = i * SLOT;
    }
    fill(recv);
    CALL(MPI_Neighbor_alltoallv(send, scounts, sdispls, MPI_INT, recv, rcounts, rdispls, MPI_INT,
                                comm),
         MPI_Ineighbor_alltoallv(send, scounts, sdispls, MPI_INT, recv, rcounts, rdispls, MPI_INT,
                                 comm, &req));
    snprintf(line, sizeof line, "%s %sneighbor_alltoallv:", name, mode);
    for (int i = 0; i < nsrc; ++i) check_slot(line, recv, i, rcounts[i], 0, line);
    say("%s", line);

    /* alltoallw: 2 ints per block; odd receive slots through a strided type (elements 0 and
     * 2 of the slot), its copy freed before the call completes */
    for (int b = 0; b < ndst; ++b) {
      scounts[b] = 2;
      sdw[b] = (MPI_Aint)(b * SLOT * sizeof(int));
      stypes[b] = MPI_INT;
    }
    MPI_Datatype strided;
    MPI_Type_dup(every2nd, &strided);
    for (int i = 0; i < nsrc; ++i) {
      rcounts[i] = i % 2 ? 1 : 2;
      rtypes[i] = i % 2 ? strided : MPI_INT;
      rdw[i] = (MPI_Aint)(i * SLOT * sizeof(int));
    }
    fill(recv);
    if (nb) {
      MPI_Ineighbor_alltoallw(send, scounts, sdw, stypes, recv, rcounts, rdw, rtypes, comm, &req);
      MPI_Type_free(&strided);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
      MPI_Neighbor_alltoallw(send, scounts, sdw, stypes, recv, rcounts, rdw, rtypes, comm);
      MPI_Type_free(&strided);
    }
    for (int i = 1; i < nsrc; i += 2) { /* move elements 0, 2 to 0, 1 for checking */
      CHECK(recv[i * SLOT + 1] == -1);
      recv[i * SLOT + 1] = recv[i * SLOT + 2];
      recv[i * SLOT + 2] = -1;
    }
    snprintf(line, sizeof line, "%s %sneighbor_alltoallw:", name, mode);
    for (int i = 0; i < nsrc; ++i) check_slot(line, recv, i, 2, 0, line);
    say("%s", line);
#undef CALL
  }
  MPI_Type_free(&every2nd);
}

int main(int argc, char **argv) {
  mt_init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  MPI_Comm ring, grid, graph, dist;
  int dims1[1] = {size}, periods1[1] = {1};
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims1, periods1, 0, &ring);
  run(ring, "ring");

  int dims2[2] = {0, 0}, periods2[2] = {0, 0};
  MPI_Dims_create(size, 2, dims2);
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims2, periods2, 0, &grid);
  run(grid, "grid");

  /* an undirected ring, each node's neighbours listed left first on even nodes, right first on
   * odd ones (a graph's neighbours are both its sources and its destinations) */
  int index[64], edges[128];
  for (int r = 0; r < size; ++r) {
    edges[2 * r + r % 2] = (r + size - 1) % size;
    edges[2 * r + 1 - r % 2] = (r + 1) % size;
    index[r] = 2 * r + 2;
  }
  MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &graph);
  run(graph, "graph");

  /* sends to the next two, receives from the previous two (nearest last) */
  int srcl[2] = {(rank + size - 2) % size, (rank + size - 1) % size};
  int dstl[2] = {(rank + 1) % size, (rank + 2) % size};
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcl, MPI_UNWEIGHTED, 2, dstl, MPI_UNWEIGHTED,
                                 MPI_INFO_NULL, 0, &dist);
  run(dist, "dist_graph");

  MPI_Comm_free(&ring);
  MPI_Comm_free(&grid);
  MPI_Comm_free(&graph);
  MPI_Comm_free(&dist);
  return mt_finish();
}
