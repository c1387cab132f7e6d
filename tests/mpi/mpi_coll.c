/* Collectives, blocking and non-blocking, with MPI_IN_PLACE, every v-variant, MINLOC/MAXLOC,
 * user-defined ops, and reductions over several predefined types. Prints checksums that must
 * match across implementations. */
#include "mtest.h"

static void user_sum_int(void *in, void *inout, int *len, MPI_Datatype *dt) {
  int *a = in, *b = inout;
  CHECK(*dt == MPI_INT);
  for (int i = 0; i < *len; i++) b[i] += a[i];
}

/* non-commutative: 2x2 integer matrix product, inout = in * inout */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt) {
  int *a = in, *b = inout;
  (void)dt;
  for (int k = 0; k < *len; k++, a += 4, b += 4) {
    int r[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                a[2] * b[1] + a[3] * b[3]};
    memcpy(b, r, sizeof r);
  }
}

int main(int argc, char **argv) {
  mt_init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm comm = MPI_COMM_WORLD;
  int p = size;

  CHECK(MPI_Barrier(comm) == MPI_SUCCESS);

  /* bcast from each root */
  for (int root = 0; root < p; root++) {
    double v[5];
    for (int i = 0; i < 5; i++) v[i] = rank == root ? root + i * 0.5 : -1;
    MPI_Bcast(v, 5, MPI_DOUBLE, root, comm);
    for (int i = 0; i < 5; i++) CHECK(v[i] == root + i * 0.5);
  }
  say("bcast: ok");

  /* reduce / allreduce on several types; IN_PLACE at the root */
  {
    int in = rank + 1, out = 0;
    MPI_Reduce(&in, &out, 1, MPI_INT, MPI_SUM, 0, comm);
    if (rank == 0) CHECK(out == p * (p + 1) / 2);
    long long ll = (long long)rank << 33, llmax = 0;
    MPI_Allreduce(&ll, &llmax, 1, MPI_LONG_LONG, MPI_MAX, comm);
    CHECK(llmax == ((long long)(p - 1) << 33));
    double d[3] = {rank, -rank, 0.5};
    if (rank == 1 % p)
      MPI_Reduce(MPI_IN_PLACE, d, 3, MPI_DOUBLE, MPI_SUM, 1 % p, comm);
    else
      MPI_Reduce(d, NULL, 3, MPI_DOUBLE, MPI_SUM, 1 % p, comm);
    if (rank == 1 % p) CHECK(d[0] == p * (p - 1) / 2.0 && d[2] == 0.5 * p);
    float f = rank, fprod = 0;
    MPI_Allreduce(&f, &fprod, 1, MPI_FLOAT, MPI_MIN, comm);
    CHECK(fprod == 0);
    unsigned u = 1u << rank, ub = 0;
    MPI_Allreduce(&u, &ub, 1, MPI_UNSIGNED, MPI_BOR, comm);
    CHECK(ub == (1u << p) - 1);
    signed char sc = 1, scs = 0;
    MPI_Allreduce(&sc, &scs, 1, MPI_SIGNED_CHAR, MPI_SUM, comm);
    CHECK(scs == p);
    unsigned char uc = 3, ucs;
    MPI_Allreduce(&uc, &ucs, 1, MPI_UNSIGNED_CHAR, MPI_PROD, comm);
    int land_in = rank != 99, land = 0;
    MPI_Allreduce(&land_in, &land, 1, MPI_INT, MPI_LAND, comm);
    CHECK(land == 1);
    short sh = (short)rank, shx;
    MPI_Allreduce(&sh, &shx, 1, MPI_SHORT, MPI_BXOR, comm);
    int64_t i64 = rank, i64s;
    MPI_Allreduce(&i64, &i64s, 1, MPI_INT64_T, MPI_SUM, comm);
    CHECK(i64s == p * (p - 1) / 2);
    int inplace = rank;
    MPI_Allreduce(MPI_IN_PLACE, &inplace, 1, MPI_INT, MPI_SUM, comm);
    CHECK(inplace == p * (p - 1) / 2);
    say("reduce: int=%d ll=%lld uc=%u shx=%d", out, llmax, (unsigned)ucs, (int)shx);
  }

  /* aliased buffers on non-root ranks of MPI_Reduce (recvbuf is insignificant there) */
  {
    int v[2] = {rank, 1};
    if (rank == 0) {
      int r[2];
      MPI_Reduce(v, r, 2, MPI_INT, MPI_SUM, 0, comm);
      CHECK(r[0] == p * (p - 1) / 2 && r[1] == p);
    } else {
      MPI_Reduce(v, v, 2, MPI_INT, MPI_SUM, 0, comm);
    }
  }
  say("reduce aliased: ok");

  /* MINLOC / MAXLOC */
  {
    struct { double v; int i; } dv = {(double)((rank * 7) % p), rank }, dmin, dmax;
    MPI_Allreduce(&dv, &dmin, 1, MPI_DOUBLE_INT, MPI_MINLOC, comm);
    MPI_Allreduce(&dv, &dmax, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
    struct { int v; int i; } iv = {rank % 2, rank}, imax;
    MPI_Allreduce(&iv, &imax, 1, MPI_2INT, MPI_MAXLOC, comm);
    say("minloc: %g@%d maxloc: %g@%d 2int: %d@%d", dmin.v, dmin.i, dmax.v, dmax.i, imax.v, imax.i);
  }

  /* user ops: commutative sum, non-commutative matrix product (order matters) */
  {
    MPI_Op op;
    MPI_Op_create(user_sum_int, 1, &op);
    int in[3] = {rank, 1, 2 * rank}, out[3];
    MPI_Allreduce(in, out, 3, MPI_INT, op, comm);
    CHECK(out[0] == p * (p - 1) / 2 && out[1] == p);
    MPI_Reduce(in, out, 3, MPI_INT, op, p - 1, comm);
    if (rank == p - 1) CHECK(out[2] == p * (p - 1));
    int commute = 0;
    MPI_Op_commutative(op, &commute);
    CHECK(commute == 1);
    MPI_Op_free(&op);
    CHECK(op == MPI_OP_NULL);

    MPI_Datatype mat;
    MPI_Type_contiguous(4, MPI_INT, &mat);
    MPI_Type_commit(&mat);
    MPI_Op mm;
    MPI_Op_create(matmul, 0, &mm);
    int m[4] = {1, rank + 1, 0, 1}, r[4] = {0, 0, 0, 0};
    if (rank == 0) m[1] = 2, m[2] = 1;
    MPI_Reduce(m, r, 1, mat, mm, 0, comm);
    if (rank == 0) say("matmul: %d %d %d %d", r[0], r[1], r[2], r[3]);
    MPI_Allreduce(m, r, 1, mat, mm, comm);
    say("matmul all: %d %d %d %d", r[0], r[1], r[2], r[3]);
    MPI_Op_free(&mm);
    MPI_Type_free(&mat);
  }

  /* MPI_Reduce_local: a predefined op, a user op, and a non-commutative one (inout = in op
   * inout). (Open MPI refuses predefined ops on derived types here, so none is tried.) */
  {
    double a[3] = {1.5, 2, 3}, b[3] = {10, 20, 30};
    MPI_Reduce_local(a, b, 3, MPI_DOUBLE, MPI_SUM);
    CHECK(b[0] == 11.5 && b[1] == 22 && b[2] == 33);
    MPI_Op op;
    MPI_Op_create(user_sum_int, 1, &op);
    int x[2] = {1, 2}, y[2] = {5, 6};
    MPI_Reduce_local(x, y, 2, MPI_INT, op);
    CHECK(y[0] == 6 && y[1] == 8);
    MPI_Op_free(&op);
    MPI_Datatype mat;
    MPI_Type_contiguous(4, MPI_INT, &mat);
    MPI_Type_commit(&mat);
    MPI_Op mm;
    MPI_Op_create(matmul, 0, &mm);
    int m1[4] = {1, 2, 0, 1}, m2[4] = {1, 0, 3, 1};
    MPI_Reduce_local(m1, m2, 1, mat, mm);
    CHECK(m2[0] == 7 && m2[1] == 2 && m2[2] == 3 && m2[3] == 1);
    MPI_Op_free(&mm);
    MPI_Type_free(&mat);
    say("reduce_local: %g %d %d %d %d %d", b[0], y[1], m2[0], m2[1], m2[2], m2[3]);
  }

  /* gather / scatter / allgather / alltoall (+ IN_PLACE forms) */
  {
    int *all = malloc(sizeof(int) * 2 * p), mine[2] = {rank, rank * rank};
    MPI_Gather(mine, 2, MPI_INT, all, 2, MPI_INT, 0, comm);
    if (rank == 0)
      for (int i = 0; i < p; i++) CHECK(all[2 * i] == i && all[2 * i + 1] == i * i);
    if (rank == 0) {
      all[0] = 0, all[1] = 0;
      MPI_Gather(MPI_IN_PLACE, 2, MPI_INT, all, 2, MPI_INT, 0, comm);
      CHECK(all[2 * (p - 1)] == p - 1);
    } else {
      MPI_Gather(mine, 2, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, 0, comm);
    }
    int sc[2] = {-1, -1};
    for (int i = 0; i < 2 * p; i++) all[i] = 10 * i;
    MPI_Scatter(all, 2, MPI_INT, sc, 2, MPI_INT, p - 1, comm);
    CHECK(sc[0] == 20 * rank && sc[1] == 20 * rank + 10);
    if (rank == 0)
      MPI_Scatter(all, 2, MPI_INT, MPI_IN_PLACE, 2, MPI_INT, 0, comm);
    else
      MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, sc, 2, MPI_INT, 0, comm);
    for (int i = 0; i < 2 * p; i++) all[i] = -1;
    MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, comm);
    for (int i = 0; i < p; i++) CHECK(all[2 * i + 1] == i * i);
    for (int i = 0; i < 2 * p; i++) all[i] = i / 2 == rank ? 5 * rank : -1;
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 2, MPI_INT, comm);
    for (int i = 0; i < p; i++) CHECK(all[2 * i] == 5 * i);
    int *sa = malloc(sizeof(int) * p), *ra = malloc(sizeof(int) * p);
    for (int i = 0; i < p; i++) sa[i] = rank * p + i;
    MPI_Alltoall(sa, 1, MPI_INT, ra, 1, MPI_INT, comm);
    for (int i = 0; i < p; i++) CHECK(ra[i] == i * p + rank);
    MPI_Alltoall(MPI_IN_PLACE, 1, MPI_INT, sa, 1, MPI_INT, comm);
    for (int i = 0; i < p; i++) CHECK(sa[i] == i * p + rank);
    free(all), free(sa), free(ra);
  }
  say("gather/scatter/allgather/alltoall: ok");

  /* v-variants: rank i contributes i+1 elements */
  {
    int *counts = malloc(sizeof(int) * p), *displs = malloc(sizeof(int) * p), total = 0;
    for (int i = 0; i < p; i++) counts[i] = i + 1, displs[i] = total, total += i + 1 + 1;
    int *buf = malloc(sizeof(int) * total), mine[64];
    for (int i = 0; i <= rank; i++) mine[i] = 100 * rank + i;
    for (int i = 0; i < total; i++) buf[i] = -7;
    MPI_Gatherv(mine, rank + 1, MPI_INT, buf, counts, displs, MPI_INT, 0, comm);
    if (rank == 0)
      for (int i = 0; i < p; i++) CHECK(buf[displs[i] + i] == 100 * i + i && buf[displs[i] + i + 1] == -7);
    for (int i = 0; i < total; i++) buf[i] = -7;
    MPI_Allgatherv(mine, rank + 1, MPI_INT, buf, counts, displs, MPI_INT, comm);
    long sum = 0;
    for (int i = 0; i < total; i++) sum += buf[i];
    int out[64];
    MPI_Scatterv(buf, counts, displs, MPI_INT, out, rank + 1, MPI_INT, p - 1, comm);
    CHECK(out[rank] == 100 * rank + rank);
    /* alltoallv: send j+1 elements to rank j */
    int *sc = malloc(sizeof(int) * p), *sd = malloc(sizeof(int) * p), *rc = malloc(sizeof(int) * p),
        *rd = malloc(sizeof(int) * p);
    int st = 0, rt = 0;
    for (int j = 0; j < p; j++) sc[j] = j + 1, sd[j] = st, st += j + 1, rc[j] = rank + 1, rd[j] = rt, rt += rank + 1;
    int *sb = malloc(sizeof(int) * st), *rb = malloc(sizeof(int) * rt);
    for (int i = 0; i < st; i++) sb[i] = rank * 1000 + i;
    MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm);
    for (int j = 0; j < p; j++) CHECK(rb[rd[j]] == j * 1000 + rank * (rank + 1) / 2);
    say("v: allgatherv sum=%ld", sum);
    free(counts), free(displs), free(buf), free(sc), free(sd), free(rc), free(rd), free(sb), free(rb);
  }

  /* alltoallw: rank j gets j+1 ints from every rank; the receiver takes them from odd ranks
   * through a strided vector type (every other int), from even ones as plain ints, each block at
   * a byte displacement. Then the non-blocking form, and in place (2 ints per pair). */
  {
    int *sc = malloc(sizeof(int) * p), *sd = malloc(sizeof(int) * p), *rc = malloc(sizeof(int) * p),
        *rd = malloc(sizeof(int) * p);
    MPI_Datatype *stp = malloc(sizeof(MPI_Datatype) * p), *rtp = malloc(sizeof(MPI_Datatype) * p);
    MPI_Datatype strided;
    MPI_Type_vector(rank + 1, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    int st = 0, n = rank + 1;
    for (int j = 0; j < p; j++) sc[j] = j + 1, sd[j] = st * (int)sizeof(int), st += j + 1, stp[j] = MPI_INT;
    for (int i = 0; i < p; i++) {
      rd[i] = i * 2 * n * (int)sizeof(int);
      rc[i] = i % 2 ? 1 : n;
      rtp[i] = i % 2 ? strided : MPI_INT;
    }
    int *sb = malloc(sizeof(int) * st), *rb = malloc(sizeof(int) * 2 * n * p);
    for (int i = 0; i < st; i++) sb[i] = rank * 1000 + i;
    for (int round = 0; round < 2; round++) {
      for (int i = 0; i < 2 * n * p; i++) rb[i] = -1;
      if (round == 0) {
        MPI_Alltoallw(sb, sc, sd, stp, rb, rc, rd, rtp, comm);
      } else {
        MPI_Request rq;
        MPI_Ialltoallw(sb, sc, sd, stp, rb, rc, rd, rtp, comm, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
      }
      for (int i = 0; i < p; i++) {
        int *blk = rb + i * 2 * n, step = i % 2 ? 2 : 1;
        for (int k = 0; k < n; k++) CHECK(blk[k * step] == i * 1000 + rank * (rank + 1) / 2 + k);
        if (i % 2) CHECK(blk[1] == -1);  /* the gaps of the strided type stay untouched */
      }
    }
    long wsum = 0;
    for (int i = 0; i < 2 * n * p; i++) wsum += rb[i];
    /* plain ints on both sides: the blocks move straight between the buffers */
    for (int i = 0; i < p; i++) rc[i] = n, rtp[i] = MPI_INT;
    for (int i = 0; i < 2 * n * p; i++) rb[i] = -1;
    MPI_Alltoallw(sb, sc, sd, stp, rb, rc, rd, rtp, comm);
    for (int i = 0; i < p; i++)
      for (int k = 0; k < n; k++) CHECK(rb[i * 2 * n + k] == i * 1000 + rank * (rank + 1) / 2 + k);
    int *ib = malloc(sizeof(int) * 2 * p), *twos = malloc(sizeof(int) * p), *bd = malloc(sizeof(int) * p);
    for (int i = 0; i < p; i++) twos[i] = 2, bd[i] = 2 * i * (int)sizeof(int), rtp[i] = MPI_INT;
    for (int i = 0; i < 2 * p; i++) ib[i] = rank * 100 + i;
    MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, ib, twos, bd, rtp, comm);
    for (int i = 0; i < p; i++) CHECK(ib[2 * i] == i * 100 + 2 * rank && ib[2 * i + 1] == i * 100 + 2 * rank + 1);
    say("alltoallw: sum=%ld", wsum);
    MPI_Type_free(&strided);
    free(sc), free(sd), free(rc), free(rd), free(stp), free(rtp), free(sb), free(rb), free(ib),
        free(twos), free(bd);
  }

  /* non-blocking collectives into a non-contiguous type: unpacked on completion (every other
   * int of the buffer, the gaps untouched) */
  {
    MPI_Datatype v, every2;
    MPI_Type_vector(1, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, 2 * sizeof(int), &every2);
    MPI_Type_free(&v);
    MPI_Type_commit(&every2);
    int *nb = malloc(sizeof(int) * 4 * p);
    for (int i = 0; i < 4 * p; i++) nb[i] = rank == p - 1 ? i : -1;
    MPI_Request rq;
    MPI_Ibcast(nb, 2 * p, every2, p - 1, comm, &rq);
    MPI_Type_free(&every2);  /* legal while the call runs */
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    for (int i = 0; i < 2 * p; i++) CHECK(nb[2 * i] == 2 * i && nb[2 * i + 1] == (rank == p - 1 ? 2 * i + 1 : -1));
    say("ibcast noncontig: %d %d", nb[2 * p - 2], nb[1]);
    free(nb);
  }

  /* reduce_scatter(_block), scan, exscan */
  {
    int *in = malloc(sizeof(int) * 2 * p), out2[2], *counts = malloc(sizeof(int) * p);
    for (int i = 0; i < 2 * p; i++) in[i] = rank + i;
    MPI_Reduce_scatter_block(in, out2, 2, MPI_INT, MPI_SUM, comm);
    CHECK(out2[0] == p * (p - 1) / 2 + p * 2 * rank);
    for (int i = 0; i < p; i++) counts[i] = i == 0 ? 2 : 1;
    int *in2 = malloc(sizeof(int) * (p + 1));
    for (int i = 0; i < p + 1; i++) in2[i] = i;
    MPI_Reduce_scatter(MPI_IN_PLACE, in2, counts, MPI_INT, MPI_SUM, comm);
    if (rank == 0) CHECK(in2[0] == 0 && in2[1] == p);
    if (rank > 0) CHECK(in2[0] == p * (rank + 1));
    int s = rank + 1, scan = 0, ex = -5;
    MPI_Scan(&s, &scan, 1, MPI_INT, MPI_SUM, comm);
    CHECK(scan == (rank + 1) * (rank + 2) / 2);
    MPI_Exscan(&s, &ex, 1, MPI_INT, MPI_SUM, comm);
    if (rank > 0) CHECK(ex == rank * (rank + 1) / 2);
    free(in), free(in2), free(counts);
  }
  say("reduce_scatter/scan/exscan: ok");

  /* non-blocking forms, several in flight at once */
  {
    MPI_Request rq[8];
    int a = rank, asum = -1, b[4] = {0}, c = rank, csum = -1;
    double bc = rank == 0 ? 3.25 : 0;
    int *g = malloc(sizeof(int) * p);
    MPI_Iallreduce(&a, &asum, 1, MPI_INT, MPI_SUM, comm, &rq[0]);
    MPI_Ibcast(&bc, 1, MPI_DOUBLE, 0, comm, &rq[1]);
    MPI_Iallgather(&a, 1, MPI_INT, g, 1, MPI_INT, comm, &rq[2]);
    MPI_Ibarrier(comm, &rq[3]);
    MPI_Ireduce(&c, &csum, 1, MPI_INT, MPI_MAX, 0, comm, &rq[4]);
    MPI_Iscan(&a, &b[0], 1, MPI_INT, MPI_SUM, comm, &rq[5]);
    MPI_Iexscan(&a, &b[1], 1, MPI_INT, MPI_SUM, comm, &rq[6]);
    MPI_Ialltoall(g, 0, MPI_INT, b, 0, MPI_INT, comm, &rq[7]);
    MPI_Waitall(8, rq, MPI_STATUSES_IGNORE);
    CHECK(asum == p * (p - 1) / 2 && bc == 3.25 && g[p - 1] == p - 1);
    if (rank == 0) CHECK(csum == p - 1);
    CHECK(b[0] == rank * (rank + 1) / 2);
    int *sb = malloc(sizeof(int) * p), *rb = malloc(sizeof(int) * p), *ones = malloc(sizeof(int) * p),
        *dis = malloc(sizeof(int) * p);
    for (int i = 0; i < p; i++) sb[i] = rank, ones[i] = 1, dis[i] = i;
    MPI_Igather(&a, 1, MPI_INT, rb, 1, MPI_INT, 0, comm, &rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    if (rank == 0) CHECK(rb[p - 1] == p - 1);
    MPI_Iscatter(sb, 1, MPI_INT, &c, 1, MPI_INT, 0, comm, &rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    CHECK(c == 0);
    MPI_Ialltoallv(sb, ones, dis, MPI_INT, rb, ones, dis, MPI_INT, comm, &rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    for (int i = 0; i < p; i++) CHECK(rb[i] == i);
    MPI_Igatherv(&a, 1, MPI_INT, rb, ones, dis, MPI_INT, 0, comm, &rq[0]);
    MPI_Iallgatherv(&a, 1, MPI_INT, g, ones, dis, MPI_INT, comm, &rq[1]);
    MPI_Iscatterv(sb, ones, dis, MPI_INT, &c, 1, MPI_INT, 0, comm, &rq[2]);
    MPI_Ireduce_scatter_block(sb, &c, 1, MPI_INT, MPI_SUM, comm, &rq[3]);
    int flag = 0;
    while (!flag) MPI_Testall(4, rq, &flag, MPI_STATUSES_IGNORE);
    CHECK(c == p * (p - 1) / 2);
    MPI_Ireduce_scatter(sb, &c, ones, MPI_INT, MPI_MAX, comm, &rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    CHECK(c == p - 1);
    free(g), free(sb), free(rb), free(ones), free(dis);
  }
  say("non-blocking: ok");

  return mt_finish();
}
