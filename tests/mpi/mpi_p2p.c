/* Point-to-point semantics: blocking and non-blocking sends in every mode, wildcards and
 * non-overtaking order, probe, counts, MPI_PROC_NULL, truncation, cancel, persistent and
 * buffered sends, and the completion calls. Needs at least 2 ranks. */
#include "mtest.h"

int main(int argc, char **argv) {
  mt_init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Status st;

  /* ring with Send/Recv (even ranks send first) */
  int token = rank * 10, got = -1;
  if (rank % 2 == 0) {
    MPI_Send(&token, 1, MPI_INT, right, 7, MPI_COMM_WORLD);
    MPI_Recv(&got, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &st);
  } else {
    MPI_Recv(&got, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &st);
    MPI_Send(&token, 1, MPI_INT, right, 7, MPI_COMM_WORLD);
  }
  CHECK(got == left * 10 && st.MPI_SOURCE == left && st.MPI_TAG == 7);
  say("ring: ok");

  /* non-overtaking: 5 messages same tag, then ANY_TAG, counts and sources via status */
  if (rank == 0) {
    for (int i = 0; i < 5; i++) MPI_Send(&i, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
    double d[3] = {1.5, 2.5, 3.5};
    MPI_Ssend(d, 3, MPI_DOUBLE, 1, 4, MPI_COMM_WORLD);
    MPI_Rsend(d, 2, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD);
  } else if (rank == 1) {
    for (int i = 0; i < 5; i++) {
      int v;
      MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &st);
      CHECK(v == i && st.MPI_SOURCE == 0);
    }
    double d[8];
    int count;
    MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    CHECK(st.MPI_TAG == 4);
    MPI_Get_count(&st, MPI_DOUBLE, &count);
    CHECK(count == 3);
    MPI_Recv(d, 8, MPI_DOUBLE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_DOUBLE, &count);
    CHECK(count == 3 && d[2] == 3.5);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 6);
    MPI_Recv(d, 8, MPI_DOUBLE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_DOUBLE, &count);
    CHECK(count == 2 && st.MPI_TAG == 5);
    MPI_Get_count(&st, MPI_LONG_DOUBLE, &count);
    CHECK(count == 1 || count == MPI_UNDEFINED);
  }
  say("order+probe: ok");

  /* Isend/Irecv all-to-all with Waitall */
  {
    int *sb = malloc(sizeof(int) * size), *rb = malloc(sizeof(int) * size);
    MPI_Request *rq = malloc(sizeof(MPI_Request) * 2 * size);
    for (int i = 0; i < size; i++) {
      sb[i] = rank * 100 + i;
      rb[i] = -1;
      MPI_Irecv(&rb[i], 1, MPI_INT, i, 11, MPI_COMM_WORLD, &rq[i]);
    }
    for (int i = 0; i < size; i++) MPI_Isend(&sb[i], 1, MPI_INT, i, 11, MPI_COMM_WORLD, &rq[size + i]);
    MPI_Status *sts = malloc(sizeof(MPI_Status) * 2 * size);
    CHECK(MPI_Waitall(2 * size, rq, sts) == MPI_SUCCESS);
    for (int i = 0; i < size; i++) {
      CHECK(rb[i] == i * 100 + rank);
      CHECK(sts[i].MPI_SOURCE == i && sts[i].MPI_TAG == 11);
      CHECK(rq[i] == MPI_REQUEST_NULL);
    }
    free(sb), free(rb), free(rq), free(sts);
  }
  say("isend/irecv/waitall: ok");

  /* Waitany / Waitsome / Testall / Test over messages from the left */
  {
    int vals[4] = {0}, n = 4, done = 0;
    MPI_Request rq[4];
    for (int i = 0; i < n; i++) MPI_Irecv(&vals[i], 1, MPI_INT, left, 20 + i, MPI_COMM_WORLD, &rq[i]);
    for (int i = n - 1; i >= 0; i--) {
      int v = 1000 + i;
      MPI_Send(&v, 1, MPI_INT, right, 20 + i, MPI_COMM_WORLD);
    }
    int idx;
    MPI_Waitany(n, rq, &idx, &st);
    CHECK(idx >= 0 && idx < n && vals[idx] == 1000 + idx && st.MPI_TAG == 20 + idx);
    CHECK(rq[idx] == MPI_REQUEST_NULL);
    done = 1;
    while (done < n) {
      int outc, ind[4];
      MPI_Status sts[4];
      MPI_Waitsome(n, rq, &outc, ind, sts);
      CHECK(outc >= 1);
      for (int k = 0; k < outc; k++) CHECK(vals[ind[k]] == 1000 + ind[k]);
      done += outc;
    }
    int outc;
    int ind2[4];
    MPI_Waitsome(n, rq, &outc, ind2, MPI_STATUSES_IGNORE);
    CHECK(outc == MPI_UNDEFINED);
    MPI_Waitany(n, rq, &idx, MPI_STATUS_IGNORE);
    CHECK(idx == MPI_UNDEFINED);
    int flag = 0;
    MPI_Testall(n, rq, &flag, MPI_STATUSES_IGNORE);
    CHECK(flag == 1);
    MPI_Request nul = MPI_REQUEST_NULL;
    MPI_Test(&nul, &flag, &st);
    CHECK(flag == 1);
  }
  say("waitany/waitsome/testall: ok");

  /* Issend completes only after the match; Test loops until it does */
  {
    int v = rank, r = -1, flag = 0;
    MPI_Request sr, rr;
    MPI_Issend(&v, 1, MPI_INT, right, 30, MPI_COMM_WORLD, &sr);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Irecv(&r, 1, MPI_INT, left, 30, MPI_COMM_WORLD, &rr);
    while (!flag) MPI_Test(&sr, &flag, MPI_STATUS_IGNORE);
    MPI_Wait(&rr, MPI_STATUS_IGNORE);
    CHECK(r == left);
  }
  say("issend: ok");

  /* Sendrecv and Sendrecv_replace around the ring */
  {
    long a = rank, b = -1;
    MPI_Sendrecv(&a, 1, MPI_LONG, right, 40, &b, 1, MPI_LONG, left, 40, MPI_COMM_WORLD, &st);
    CHECK(b == left && st.MPI_SOURCE == left);
    int x[3] = {rank, rank + 1, rank + 2};
    MPI_Sendrecv_replace(x, 3, MPI_INT, right, 41, left, 41, MPI_COMM_WORLD, &st);
    CHECK(x[0] == left && x[2] == left + 2);
  }
  say("sendrecv: ok");

  /* MPI_PROC_NULL */
  {
    int v = 5;
    MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0 && v == 5);
  }
  say("proc_null: ok");

  /* truncation is an error (MPI_ERRORS_RETURN), the message is consumed */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (rank == 0) {
    int big[4] = {1, 2, 3, 4};
    MPI_Send(big, 4, MPI_INT, 1, 50, MPI_COMM_WORLD);
  } else if (rank == 1) {
    int small[2];
    int rc = MPI_Recv(small, 2, MPI_INT, 0, 50, MPI_COMM_WORLD, &st);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  say("truncate: ok");

  /* cancel an unmatched receive */
  {
    int v;
    MPI_Request r;
    MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &r);
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    int flag = 0;
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag == 1);
  }
  say("cancel: ok");

  /* persistent requests, started three times */
  {
    int sv = 0, rv = -1;
    MPI_Request pr[2];
    MPI_Recv_init(&rv, 1, MPI_INT, left, 60, MPI_COMM_WORLD, &pr[0]);
    MPI_Send_init(&sv, 1, MPI_INT, right, 60, MPI_COMM_WORLD, &pr[1]);
    for (int it = 0; it < 3; it++) {
      sv = rank * 1000 + it;
      MPI_Startall(2, pr);
      MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
      CHECK(rv == left * 1000 + it);
      CHECK(pr[0] != MPI_REQUEST_NULL);
    }
    MPI_Request_free(&pr[0]);
    MPI_Request_free(&pr[1]);
    CHECK(pr[0] == MPI_REQUEST_NULL);
  }
  say("persistent: ok");

  /* buffered sends */
  {
    int bsize = 4 * (100 * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    void *buf = malloc(bsize);
    MPI_Buffer_attach(buf, bsize);
    int data[100];
    for (int i = 0; i < 100; i++) data[i] = rank + i;
    MPI_Bsend(data, 100, MPI_INT, right, 70, MPI_COMM_WORLD);
    for (int i = 0; i < 100; i++) data[i] = -1; /* the copy was taken */
    int in[100];
    MPI_Recv(in, 100, MPI_INT, left, 70, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(in[0] == left && in[99] == left + 99);
    void *back;
    int bs;
    MPI_Buffer_detach(&back, &bs);
    CHECK(back == buf && bs == bsize);
    free(buf);
  }
  say("bsend: ok");

  /* Request_free on a send; the receive still gets it */
  {
    int v = 77 + rank, r = -1;
    MPI_Request q;
    MPI_Isend(&v, 1, MPI_INT, right, 80, MPI_COMM_WORLD, &q);
    MPI_Request_free(&q);
    MPI_Recv(&r, 1, MPI_INT, left, 80, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(r == 77 + left);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  say("request_free: ok");

  /* Iprobe finds a message eventually; Get_elements on a basic type */
  {
    int v[3] = {1, 2, 3}, flag = 0;
    MPI_Request q;
    MPI_Isend(v, 3, MPI_INT, right, 90, MPI_COMM_WORLD, &q);
    while (!flag) MPI_Iprobe(left, 90, MPI_COMM_WORLD, &flag, &st);
    int n;
    MPI_Get_elements(&st, MPI_INT, &n);
    CHECK(n == 3);
    MPI_Recv(v, 3, MPI_INT, left, 90, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
  }
  say("iprobe: ok");

  /* Matched probe: a wildcard receive posted after the probe gets the next message, the
   * probed one only MPI_Mrecv / MPI_Imrecv; derived datatype; MPI_MESSAGE_NO_PROC. */
  {
    int a[4] = {rank, 1, 2, 3}, b[4] = {rank + 100, 5, 6, 7}, x[6] = {0}, y[4] = {0};
    MPI_Request q[2];
    MPI_Isend(a, 4, MPI_INT, right, 95, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(b, 4, MPI_INT, right, 95, MPI_COMM_WORLD, &q[1]);
    MPI_Message m;
    MPI_Mprobe(left, 95, MPI_COMM_WORLD, &m, &st);
    int n;
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == 4 && st.MPI_SOURCE == left && m != MPI_MESSAGE_NULL);
    MPI_Request other;
    MPI_Irecv(y, 4, MPI_INT, MPI_ANY_SOURCE, 95, MPI_COMM_WORLD, &other);
    MPI_Datatype pair;
    MPI_Type_vector(2, 1, 2, MPI_INT, &pair); /* ints 0 and 2 of 3: two fill x[0,2,3,5] */
    MPI_Type_commit(&pair);
    MPI_Mrecv(x, 2, pair, &m, &st);
    CHECK(m == MPI_MESSAGE_NULL);
    MPI_Wait(&other, MPI_STATUS_IGNORE);
    CHECK(y[0] == left + 100 && y[3] == 7);
    CHECK(x[0] == left && x[2] == 1 && x[3] == 2 && x[5] == 3 && x[1] == 0 && x[4] == 0);
    MPI_Type_free(&pair);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    int flag = 0;
    MPI_Improbe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &m, &st);
    CHECK(flag == 1 && m == MPI_MESSAGE_NO_PROC);
    MPI_Request r;
    MPI_Imrecv(x, 1, MPI_INT, &m, &r);
    MPI_Wait(&r, &st);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && m == MPI_MESSAGE_NULL);
  }
  say("mprobe: ok");

  return mt_finish();
}
