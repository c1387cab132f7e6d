/* The profiling interface: this program defines its own MPI_Send, MPI_Isend, MPI_Recv,
 * MPI_Allreduce, MPI_Comm_split and the other MPI functions the library might use inside other
 * calls (MPI_Cart_shift in the neighbourhood collectives, MPI_Bsend in MPI_Ibsend, MPI_Start in
 * MPI_Startall, MPI_Type_create_hindexed in MPI_Type_indexed...). Each counts its calls and
 * forwards to PMPI_X. The program counts the calls it makes itself; after each section the two
 * must be equal on every rank: the wrappers see every call of the program and none made inside
 * the library (MPI 3.1 section 14.2). The data of every call is checked too. */
#include "mtest.h"

enum {
  SEND, ISEND, RECV, ALLREDUCE, COMM_SPLIT, COMM_DUP, CART_SHIFT, CART_RANK, BSEND, START,
  TYPE_HVECTOR, TYPE_HINDEXED, TYPE_INDEXED, GET_ELEMENTS_X, GROUP_INCL, GROUP_EXCL,
  CREATE_KEYVAL, FREE_KEYVAL, SET_ATTR, GET_ATTR, DELETE_ATTR, NCALLS
};
static const char *names[NCALLS] = {
    "send", "isend", "recv", "allreduce", "comm_split", "comm_dup", "cart_shift", "cart_rank",
    "bsend", "start", "type_create_hvector", "type_create_hindexed", "type_indexed",
    "get_elements_x", "group_incl", "group_excl", "comm_create_keyval", "comm_free_keyval",
    "comm_set_attr", "comm_get_attr", "comm_delete_attr"};
static int seen[NCALLS]; /* by the wrappers below */
static int made[NCALLS]; /* by the program: OWN(X) before each of its own calls of X */
#define OWN(k) (made[k]++)

/* ---- the tool: counting wrappers ------------------------------------------------------------ */
int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  seen[SEND]++;
  return PMPI_Send(buf, count, type, dest, tag, comm);
}
int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *req) {
  seen[ISEND]++;
  return PMPI_Isend(buf, count, type, dest, tag, comm, req);
}
int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
  seen[RECV]++;
  return PMPI_Recv(buf, count, type, source, tag, comm, status);
}
int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
  seen[ALLREDUCE]++;
  return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
}
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
  seen[COMM_SPLIT]++;
  return PMPI_Comm_split(comm, color, key, newcomm);
}
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
  seen[COMM_DUP]++;
  return PMPI_Comm_dup(comm, newcomm);
}
int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *source, int *dest) {
  seen[CART_SHIFT]++;
  return PMPI_Cart_shift(comm, direction, disp, source, dest);
}
int MPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank) {
  seen[CART_RANK]++;
  return PMPI_Cart_rank(comm, coords, rank);
}
int MPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  seen[BSEND]++;
  return PMPI_Bsend(buf, count, type, dest, tag, comm);
}
int MPI_Start(MPI_Request *req) {
  seen[START]++;
  return PMPI_Start(req);
}
int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                            MPI_Datatype *newtype) {
  seen[TYPE_HVECTOR]++;
  return PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}
int MPI_Type_create_hindexed(int count, const int blocklengths[], const MPI_Aint displs[],
                             MPI_Datatype oldtype, MPI_Datatype *newtype) {
  seen[TYPE_HINDEXED]++;
  return PMPI_Type_create_hindexed(count, blocklengths, displs, oldtype, newtype);
}
int MPI_Type_indexed(int count, const int blocklengths[], const int displs[],
                     MPI_Datatype oldtype, MPI_Datatype *newtype) {
  seen[TYPE_INDEXED]++;
  return PMPI_Type_indexed(count, blocklengths, displs, oldtype, newtype);
}
int MPI_Get_elements_x(const MPI_Status *status, MPI_Datatype type, MPI_Count *count) {
  seen[GET_ELEMENTS_X]++;
  return PMPI_Get_elements_x(status, type, count);
}
int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup) {
  seen[GROUP_INCL]++;
  return PMPI_Group_incl(group, n, ranks, newgroup);
}
int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup) {
  seen[GROUP_EXCL]++;
  return PMPI_Group_excl(group, n, ranks, newgroup);
}
int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy_fn,
                           MPI_Comm_delete_attr_function *delete_fn, int *keyval,
                           void *extra_state) {
  seen[CREATE_KEYVAL]++;
  return PMPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}
int MPI_Comm_free_keyval(int *keyval) {
  seen[FREE_KEYVAL]++;
  return PMPI_Comm_free_keyval(keyval);
}
int MPI_Comm_set_attr(MPI_Comm comm, int keyval, void *value) {
  seen[SET_ATTR]++;
  return PMPI_Comm_set_attr(comm, keyval, value);
}
int MPI_Comm_get_attr(MPI_Comm comm, int keyval, void *value, int *flag) {
  seen[GET_ATTR]++;
  return PMPI_Comm_get_attr(comm, keyval, value, flag);
}
int MPI_Comm_delete_attr(MPI_Comm comm, int keyval) {
  seen[DELETE_ATTR]++;
  return PMPI_Comm_delete_attr(comm, keyval);
}

/* Every counter equals the program's own calls; rank 0 prints the section's calls (the same
 * under every MPI). */
static void compare(const char *section) {
  static int before[NCALLS];
  char line[512];
  int len = snprintf(line, sizeof line, "%s:", section);
  for (int k = 0; k < NCALLS; k++) {
    if (seen[k] != made[k])
      fprintf(stderr, "[rank %d] %s: %s seen %d times, the program made %d calls\n", mt_rank_,
              section, names[k], seen[k], made[k]);
    CHECK(seen[k] == made[k]);
    if (made[k] != before[k] && len < (int)sizeof line)
      len += snprintf(line + len, sizeof line - len, " %s=%d", names[k], made[k] - before[k]);
    before[k] = made[k];
  }
  say("%s", line);
}

int main(int argc, char **argv) {
  mt_init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;

  /* ---- point-to-point: the wrapped calls, then calls that could be made of them ---- */
  for (int i = 0; i < 3; i++) {
    int out = 100 * rank + i, in = -1;
    MPI_Request rq;
    OWN(ISEND), MPI_Isend(&out, 1, MPI_INT, right, i, MPI_COMM_WORLD, &rq);
    OWN(RECV), MPI_Recv(&in, 1, MPI_INT, left, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    CHECK(in == 100 * left + i);
  }
  {
    int out[4] = {rank, rank + 1, rank + 2, rank + 3}, in[4] = {-1, -1, -1, -1};
    MPI_Request rq;
    MPI_Irecv(in, 4, MPI_INT, left, 10, MPI_COMM_WORLD, &rq);
    OWN(SEND), MPI_Send(out, 4, MPI_INT, right, 10, MPI_COMM_WORLD);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    CHECK(in[0] == left && in[3] == left + 3);
    MPI_Irecv(in, 1, MPI_INT, left, 11, MPI_COMM_WORLD, &rq);
    MPI_Ssend(out, 1, MPI_INT, right, 11, MPI_COMM_WORLD);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    CHECK(in[0] == left);
    int got = -1, rep = rank;
    MPI_Sendrecv(&rank, 1, MPI_INT, right, 12, &got, 1, MPI_INT, left, 12, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    CHECK(got == left);
    MPI_Sendrecv_replace(&rep, 1, MPI_INT, left, 13, right, 13, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
    CHECK(rep == right);
  }
  compare("p2p");

  /* ---- collectives ---- */
  {
    int sum = -1, max = -1, expect = size * (size - 1) / 2;
    OWN(ALLREDUCE), MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    OWN(ALLREDUCE), MPI_Allreduce(&rank, &max, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(sum == expect && max == size - 1);
    int v = rank == size - 1 ? 42 : -1, red = -1;
    MPI_Bcast(&v, 1, MPI_INT, size - 1, MPI_COMM_WORLD);
    CHECK(v == 42);
    MPI_Reduce(&rank, &red, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    CHECK(rank != 0 || red == expect);
    int all[64];
    MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size && r < 64; r++) CHECK(all[r] == r);
    MPI_Barrier(MPI_COMM_WORLD);
    int scan = -1;
    MPI_Scan(&rank, &scan, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(scan == rank * (rank + 1) / 2);
  }
  compare("collectives");

  /* ---- communicators and topologies ---- */
  {
    MPI_Comm half, dup, dupi;
    OWN(COMM_SPLIT), MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int hsize;
    MPI_Comm_size(half, &hsize);
    CHECK(hsize == (size + 1 - rank % 2) / 2);
    OWN(COMM_DUP), MPI_Comm_dup(half, &dup);
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &dupi);
    int hsum = -1;
    OWN(ALLREDUCE), MPI_Allreduce(&rank, &hsum, 1, MPI_INT, MPI_SUM, dup);
    const int k = rank % 2 ? size / 2 : (size + 1) / 2; /* 1+3+..: k*k, 0+2+..: k*(k-1) */
    CHECK(hsum == (rank % 2 ? k * k : k * (k - 1)));
    MPI_Comm_free(&dup);
    MPI_Comm_free(&dupi);
    MPI_Comm_free(&half);

    int dims[2] = {0, 0}, periods[2] = {1, 0}, coords[2], crank, src, dst;
    MPI_Dims_create(size, 2, dims);
    MPI_Comm cart, row, graph;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Comm_rank(cart, &crank);
    MPI_Cart_coords(cart, crank, 2, coords);
    OWN(CART_SHIFT), MPI_Cart_shift(cart, 0, 1, &src, &dst);
    int at[2] = {(coords[0] + 1) % dims[0], coords[1]}, r1;
    OWN(CART_RANK), MPI_Cart_rank(cart, at, &r1);
    CHECK(r1 == dst);
    /* one block from each of the 4 neighbours (PROC_NULL ones stay untouched) */
    int nb[4] = {-1, -1, -1, -1};
    MPI_Neighbor_allgather(&crank, 1, MPI_INT, nb, 1, MPI_INT, cart);
    CHECK(nb[0] == src && nb[1] == dst);
    OWN(CART_SHIFT), MPI_Cart_shift(cart, 1, 1, &src, &dst);
    CHECK(nb[2] == (src == MPI_PROC_NULL ? -1 : src) && nb[3] == (dst == MPI_PROC_NULL ? -1 : dst));
    int remain[2] = {0, 1}, rsize;
    MPI_Cart_sub(cart, remain, &row);
    MPI_Comm_size(row, &rsize);
    CHECK(rsize == dims[1]);
    MPI_Comm_free(&row);
    MPI_Comm_free(&cart);
    int index[64], edges[64], nn = size < 64 ? size : 64;
    for (int i = 0; i < nn; i++) index[i] = i + 1, edges[i] = (i + 1) % nn;
    MPI_Graph_create(MPI_COMM_WORLD, nn, index, edges, 0, &graph);
    int nbrs = -1;
    MPI_Graph_neighbors_count(graph, rank, &nbrs);
    CHECK(nbrs == 1);
    MPI_Comm_free(&graph);
    say("cart %dx%d, graph ring of %d", dims[0], dims[1], nn);
  }
  compare("communicators");

  /* ---- datatypes (a vector is an hvector, an indexed block an indexed type...) ---- */
  {
    MPI_Datatype vec, hvec, idx, hidx, iblk, hblk;
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
    OWN(TYPE_HVECTOR), MPI_Type_create_hvector(3, 1, 2 * sizeof(int), MPI_INT, &hvec);
    int bl[2] = {1, 2}, di[2] = {0, 3}, db[2] = {1, 4};
    MPI_Aint da[2] = {0, 3 * sizeof(int)}, dab[2] = {sizeof(int), 4 * sizeof(int)};
    OWN(TYPE_INDEXED), MPI_Type_indexed(2, bl, di, MPI_INT, &idx);
    OWN(TYPE_HINDEXED), MPI_Type_create_hindexed(2, bl, da, MPI_INT, &hidx);
    MPI_Type_create_indexed_block(2, 1, db, MPI_INT, &iblk);
    MPI_Type_create_hindexed_block(2, 1, dab, MPI_INT, &hblk);
    MPI_Datatype all[6] = {vec, hvec, idx, hidx, iblk, hblk};
    /* the elements each type picks out of 0..5, then sent to self and checked */
    const int picks[6][4] = {{0, 2, 4, -1}, {0, 2, 4, -1}, {0, 3, 4, -1},
                             {0, 3, 4, -1}, {1, 4, -1, -1}, {1, 4, -1, -1}};
    for (int t = 0; t < 6; t++) {
      MPI_Type_commit(&all[t]);
      int src6[6] = {10, 11, 12, 13, 14, 15}, got[4] = {-1, -1, -1, -1};
      MPI_Status st;
      MPI_Sendrecv(src6, 1, all[t], 0, 20 + t, got, 4, MPI_INT, 0, 20 + t, MPI_COMM_SELF, &st);
      int n = -1;
      MPI_Get_elements(&st, MPI_INT, &n);
      int want = 0;
      for (int j = 0; j < 4 && picks[t][j] >= 0; j++, want++) CHECK(got[j] == 10 + picks[t][j]);
      CHECK(n == want);
      MPI_Count nx = -1;
      OWN(GET_ELEMENTS_X), MPI_Get_elements_x(&st, MPI_INT, &nx);
      CHECK(nx == want);
      MPI_Type_free(&all[t]);
    }
  }
  compare("datatypes");

  /* ---- groups (a range is a list of ranks) ---- */
  {
    MPI_Group world, g1, g2, g3, g4;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int ranges[1][3] = {{0, size - 1, 2}}, evens = (size + 1) / 2, first = 0, n;
    MPI_Group_range_incl(world, 1, ranges, &g1);
    MPI_Group_range_excl(world, 1, ranges, &g2);
    OWN(GROUP_INCL), MPI_Group_incl(world, 1, &first, &g3);
    OWN(GROUP_EXCL), MPI_Group_excl(world, 1, &first, &g4);
    MPI_Group_size(g1, &n);
    CHECK(n == evens);
    MPI_Group_size(g2, &n);
    CHECK(n == size - evens);
    MPI_Group_size(g3, &n);
    CHECK(n == 1);
    MPI_Group_size(g4, &n);
    CHECK(n == size - 1);
    MPI_Group_free(&g1), MPI_Group_free(&g2), MPI_Group_free(&g3), MPI_Group_free(&g4);
    MPI_Group_free(&world);
  }
  compare("groups");

  /* ---- attributes: the MPI-1 names are the MPI-2 calls (Open MPI warns they are deprecated) */
  {
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
    int k1, k2, v1 = 7, v2 = 8, *p = NULL, flag = 0;
    MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &k1, NULL);
    OWN(CREATE_KEYVAL),
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k2, NULL);
    MPI_Attr_put(MPI_COMM_WORLD, k1, &v1);
    OWN(SET_ATTR), MPI_Comm_set_attr(MPI_COMM_WORLD, k2, &v2);
    MPI_Attr_get(MPI_COMM_WORLD, k1, &p, &flag);
    CHECK(flag && p == &v1);
    OWN(GET_ATTR), MPI_Comm_get_attr(MPI_COMM_WORLD, k2, &p, &flag);
    CHECK(flag && p == &v2);
    MPI_Attr_delete(MPI_COMM_WORLD, k1);
    OWN(DELETE_ATTR), MPI_Comm_delete_attr(MPI_COMM_WORLD, k2);
    OWN(GET_ATTR), MPI_Comm_get_attr(MPI_COMM_WORLD, k1, &p, &flag);
    CHECK(!flag);
    MPI_Keyval_free(&k1);
    OWN(FREE_KEYVAL), MPI_Comm_free_keyval(&k2);
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
  }
  compare("attributes");

  /* ---- persistent and buffered sends ---- */
  {
    int out[2] = {rank, rank}, in[2] = {-1, -1};
    MPI_Request pr[2];
    MPI_Send_init(&out[0], 1, MPI_INT, right, 30, MPI_COMM_WORLD, &pr[0]);
    MPI_Recv_init(&in[0], 1, MPI_INT, left, 30, MPI_COMM_WORLD, &pr[1]);
    MPI_Startall(2, pr);
    MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
    CHECK(in[0] == left);
    in[0] = -1;
    OWN(START), MPI_Start(&pr[1]);
    OWN(START), MPI_Start(&pr[0]);
    MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
    CHECK(in[0] == left);
    MPI_Request_free(&pr[0]);
    MPI_Request_free(&pr[1]);

    static char bbuf[4096];
    MPI_Buffer_attach(bbuf, sizeof bbuf);
    MPI_Request rq;
    OWN(BSEND), MPI_Bsend(&out[0], 1, MPI_INT, right, 31, MPI_COMM_WORLD);
    MPI_Ibsend(&out[1], 1, MPI_INT, right, 32, MPI_COMM_WORLD, &rq);
    OWN(RECV), MPI_Recv(&in[0], 1, MPI_INT, left, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    OWN(RECV), MPI_Recv(&in[1], 1, MPI_INT, left, 32, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    CHECK(in[0] == left && in[1] == left);
    void *b;
    int bsize;
    MPI_Buffer_detach(&b, &bsize);
    CHECK(b == bbuf && bsize == (int)sizeof bbuf);
  }
  compare("persistent, buffered");

  return mt_finish();
}
