/* Derived datatypes: vector, indexed, struct, subarray, resized; their sizes and extents,
 * point-to-point and collectives with them, MPI_Get_elements on partial messages, pack/unpack,
 * names, and names. */
#include "mtest.h"

struct particle {
  double x;
  int id;
  char tag;
};

int main(int argc, char **argv) {
  mt_init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Aint lb, ext;
  int sz;

  /* predefined types: commit is allowed, sizes */
  MPI_Datatype pre = MPI_INT;
  CHECK(MPI_Type_commit(&pre) == MPI_SUCCESS);
  MPI_Type_size(MPI_DOUBLE, &sz);
  CHECK(sz == 8);
  MPI_Type_size(MPI_C_BOOL, &sz);
  CHECK(sz == 1);
  char tname[MPI_MAX_OBJECT_NAME];
  int tlen;
  MPI_Type_get_name(MPI_INT, tname, &tlen);
  say("name of MPI_INT: %s", tname);

  /* vector: column of a 4x5 matrix */
  MPI_Datatype col;
  MPI_Type_vector(4, 1, 5, MPI_INT, &col);
  MPI_Type_commit(&col);
  MPI_Type_size(col, &sz);
  MPI_Type_get_extent(col, &lb, &ext);
  say("vector: size=%d lb=%ld extent=%ld", sz, (long)lb, (long)ext);
  int m[20], colv[4];
  for (int i = 0; i < 20; i++) m[i] = rank * 100 + i;
  MPI_Status st;
  MPI_Sendrecv(&m[2], 1, col, right, 0, colv, 4, MPI_INT, left, 0, MPI_COMM_WORLD, &st);
  for (int i = 0; i < 4; i++) CHECK(colv[i] == left * 100 + 5 * i + 2);
  int m2[20];
  for (int i = 0; i < 20; i++) m2[i] = -1;
  MPI_Request rq;
  MPI_Irecv(&m2[1], 1, col, left, 1, MPI_COMM_WORLD, &rq);
  MPI_Send(colv, 4, MPI_INT, right, 1, MPI_COMM_WORLD);
  MPI_Wait(&rq, &st);
  for (int i = 0; i < 4; i++) CHECK(m2[5 * i + 1] == ((left + size - 1) % size) * 100 + 5 * i + 2);
  CHECK(m2[0] == -1 && m2[2] == -1);
  int cnt;
  MPI_Get_count(&st, col, &cnt);
  CHECK(cnt == 1);
  MPI_Get_elements(&st, col, &cnt);
  CHECK(cnt == 4);

  /* partial receive: 2 ints into a column type */
  MPI_Sendrecv(colv, 2, MPI_INT, right, 2, &m2[0], 1, col, left, 2, MPI_COMM_WORLD, &st);
  MPI_Get_count(&st, col, &cnt);
  CHECK(cnt == MPI_UNDEFINED);
  MPI_Get_elements(&st, col, &cnt);
  CHECK(cnt == 2);

  /* indexed */
  MPI_Datatype idx;
  int bl[3] = {2, 1, 3}, dis[3] = {0, 4, 7};
  MPI_Type_indexed(3, bl, dis, MPI_DOUBLE, &idx);
  MPI_Type_commit(&idx);
  MPI_Type_size(idx, &sz);
  MPI_Type_get_extent(idx, &lb, &ext);
  say("indexed: size=%d extent=%ld", sz, (long)ext);
  double dsrc[10], ddst[10];
  for (int i = 0; i < 10; i++) dsrc[i] = rank + i / 10.0, ddst[i] = -1;
  MPI_Sendrecv(dsrc, 1, idx, right, 3, ddst, 1, idx, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(ddst[0] == left && ddst[1] == left + 0.1 && ddst[2] == -1 && ddst[4] == left + 0.4 &&
        ddst[9] == left + 0.9 && ddst[6] == -1);

  /* struct matching a C struct (extent includes the trailing padding) */
  MPI_Datatype pt;
  int pbl[3] = {1, 1, 1};
  MPI_Aint pd[3] = {offsetof(struct particle, x), offsetof(struct particle, id),
                    offsetof(struct particle, tag)};
  MPI_Datatype pty[3] = {MPI_DOUBLE, MPI_INT, MPI_CHAR};
  MPI_Type_create_struct(3, pbl, pd, pty, &pt);
  MPI_Type_commit(&pt);
  MPI_Type_size(pt, &sz);
  MPI_Type_get_extent(pt, &lb, &ext);
  say("struct: size=%d extent=%ld sizeof=%zu", sz, (long)ext, sizeof(struct particle));
  struct particle ps[3], pr[3];
  for (int i = 0; i < 3; i++) ps[i].x = rank + i, ps[i].id = rank * 10 + i, ps[i].tag = 'a' + i;
  MPI_Sendrecv(ps, 3, pt, right, 4, pr, 3, pt, left, 4, MPI_COMM_WORLD, &st);
  CHECK(pr[2].x == left + 2 && pr[2].id == left * 10 + 2 && pr[2].tag == 'c');
  MPI_Get_elements(&st, pt, &cnt);
  CHECK(cnt == 9);
  /* bcast of structs */
  MPI_Bcast(ps, 3, pt, 0, MPI_COMM_WORLD);
  CHECK(ps[1].id == 1);

  /* resized vector in a gather: each rank sends a column, root receives interleaved */
  MPI_Datatype colr;
  MPI_Type_create_resized(col, 0, sizeof(int), &colr);
  MPI_Type_commit(&colr);
  MPI_Type_get_extent(colr, &lb, &ext);
  CHECK(ext == sizeof(int));
  {
    int *mat = malloc(sizeof(int) * 4 * 5), mine[4];
    for (int i = 0; i < 4; i++) mine[i] = rank * 10 + i;
    for (int i = 0; i < 20; i++) mat[i] = -1;
    if (size <= 5) {
      MPI_Gather(mine, 4, MPI_INT, mat, 1, colr, 0, MPI_COMM_WORLD);
      if (rank == 0)
        for (int r = 0; r < size; r++) CHECK(mat[5 * 3 + r] == r * 10 + 3);
    }
    free(mat);
  }

  /* subarray: 2x2 block from the middle of a 4x4 array */
  MPI_Datatype sub;
  int sizes[2] = {4, 4}, subs[2] = {2, 2}, starts[2] = {1, 1};
  MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sub);
  MPI_Type_commit(&sub);
  MPI_Type_size(sub, &sz);
  MPI_Type_get_extent(sub, &lb, &ext);
  say("subarray: size=%d extent=%ld", sz, (long)ext);
  int a44[16], blk[4];
  for (int i = 0; i < 16; i++) a44[i] = i;
  MPI_Sendrecv(a44, 1, sub, right, 5, blk, 4, MPI_INT, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(blk[0] == 5 && blk[1] == 6 && blk[2] == 9 && blk[3] == 10);

  /* pack / unpack */
  {
    char pbuf[256];
    int pos = 0, psz;
    MPI_Pack_size(1, col, MPI_COMM_WORLD, &psz);
    CHECK(psz >= 16);
    MPI_Pack(&m[0], 1, col, pbuf, sizeof pbuf, &pos, MPI_COMM_WORLD);
    double dv = 2.5;
    MPI_Pack(&dv, 1, MPI_DOUBLE, pbuf, sizeof pbuf, &pos, MPI_COMM_WORLD);
    int outv[4];
    double dout;
    int pos2 = 0;
    MPI_Unpack(pbuf, pos, &pos2, outv, 4, MPI_INT, MPI_COMM_WORLD);
    MPI_Unpack(pbuf, pos, &pos2, &dout, 1, MPI_DOUBLE, MPI_COMM_WORLD);
    CHECK(outv[3] == rank * 100 + 15 && dout == 2.5 && pos2 == pos);
    /* packed data sent as MPI_PACKED, received as the type */
    int back[4];
    MPI_Sendrecv(pbuf, 16, MPI_PACKED, right, 6, back, 4, MPI_INT, left, 6, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    CHECK(back[1] == left * 100 + 5);
  }

  /* names of derived types */
  {
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Type_set_name(pair, "pair");
    MPI_Type_get_name(pair, tname, &tlen);
    CHECK(strcmp(tname, "pair") == 0);
    MPI_Type_free(&pair);
    CHECK(pair == MPI_DATATYPE_NULL);
  }

  /* dup and true extent */
  MPI_Datatype d2;
  MPI_Type_dup(idx, &d2);
  MPI_Aint tlb, text;
  MPI_Type_get_true_extent(d2, &tlb, &text);
  say("true extent: %ld %ld", (long)tlb, (long)text);
  MPI_Type_free(&d2);

  MPI_Type_free(&col);
  MPI_Type_free(&colr);
  MPI_Type_free(&idx);
  MPI_Type_free(&pt);
  MPI_Type_free(&sub);
  return mt_finish();
}
