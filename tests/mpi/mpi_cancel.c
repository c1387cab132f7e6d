/* MPI_Cancel of sends (rank 0 -> rank 1; more ranks only join the final checks): MPI_Isend
 * and MPI_Issend of an eager size (16 B), of 1 MiB (rendezvous) and of a strided vector type
 * (packed by the layer), a persistent MPI_Send_init, on MPI_COMM_WORLD and on a duplicate:
 *   unmatched: MPI_Cancel, then MPI_Wait (or MPI_Test until done) returns and
 *     MPI_Test_cancelled says true; rank 1 then receives on the same tag and gets the small
 *     message rank 0 sent afterwards, never the cancelled one;
 *   matched: rank 1 has received the message before rank 0 cancels: MPI_Test_cancelled false,
 *     MPI_Get_count the full count;
 * and rank 1 finds no message from rank 0 left over at the end (MPI_Iprobe).
 * Open MPI does not cancel sends (its unmatched MPI_Issend + MPI_Cancel + MPI_Wait never
 * returns), so this program is not part of the Open MPI control (testlist: rrt-only). */
#include "mtest.h"

#define BIG (1 << 20)
enum { TAG_GO = 1, TAG_DONE = 2, TAG_END = 3 };

static char *sbuf, *rbuf;
static MPI_Datatype strided; /* 64 blocks of 4 ints, stride 8 ints */

/* A send of kind k: 0 eager, 1 rendezvous, 2 vector type (staged), 3 persistent eager. */
static void post(int k, int sync, int tag, MPI_Comm comm, MPI_Request *r) {
  switch (k) {
    case 0:
      if (sync) MPI_Issend(sbuf, 16, MPI_CHAR, 1, tag, comm, r);
      else MPI_Isend(sbuf, 16, MPI_CHAR, 1, tag, comm, r);
      break;
    case 1:
      if (sync) MPI_Issend(sbuf, BIG, MPI_CHAR, 1, tag, comm, r);
      else MPI_Isend(sbuf, BIG, MPI_CHAR, 1, tag, comm, r);
      break;
    case 2:
      if (sync) MPI_Issend(sbuf, 1, strided, 1, tag, comm, r);
      else MPI_Isend(sbuf, 1, strided, 1, tag, comm, r);
      break;
    default:
      if (sync) MPI_Ssend_init(sbuf, 16, MPI_CHAR, 1, tag, comm, r);
      else MPI_Send_init(sbuf, 16, MPI_CHAR, 1, tag, comm, r);
      MPI_Start(r);
      break;
  }
}
static int bytes_of(int k) { return k == 1 ? BIG : k == 2 ? 64 * 4 * (int)sizeof(int) : 16; }

/* Completes r by MPI_Wait, or by MPI_Test in a loop. */
static void complete(MPI_Request *r, MPI_Status *st, int by_test) {
  if (!by_test) {
    MPI_Wait(r, st);
    return;
  }
  int flag = 0;
  while (!flag) MPI_Test(r, &flag, st);
}

static void unmatched(MPI_Comm comm, int rank, const char *name) {
  int errs0 = mt_errors;
  for (int k = 0; k < 4; k++) {
    for (int sync = 0; sync < 2; sync++) {
      int tag = 100 + 10 * k + sync;
      if (rank == 0) {
        MPI_Request r;
        MPI_Status st;
        int flag = 0;
        post(k, sync, tag, comm, &r);
        MPI_Cancel(&r);
        complete(&r, &st, (k + sync) % 2);
        MPI_Test_cancelled(&st, &flag);
        CHECK(flag == 1);
        if (k == 3) { /* persistent: inactive again, startable once more; then freed */
          CHECK(r != MPI_REQUEST_NULL);
          MPI_Start(&r);
          MPI_Cancel(&r);
          MPI_Wait(&r, &st);
          MPI_Test_cancelled(&st, &flag);
          CHECK(flag == 1);
          MPI_Request_free(&r);
        }
        int note = tag;
        MPI_Send(&note, 1, MPI_INT, 1, TAG_GO, comm);
        MPI_Send(&note, 1, MPI_INT, 1, tag, comm);
      } else if (rank == 1) {
        MPI_Status st;
        int note = -1, count = -1;
        MPI_Recv(&note, 1, MPI_INT, 0, TAG_GO, comm, MPI_STATUS_IGNORE);
        MPI_Recv(rbuf, BIG, MPI_CHAR, 0, tag, comm, &st);
        MPI_Get_count(&st, MPI_CHAR, &count);
        memcpy(&note, rbuf, sizeof note);
        CHECK(count == (int)sizeof(int) && note == tag);
      }
    }
  }
  say("%s: unmatched sends cancelled: %s", name, mt_errors == errs0 ? "ok" : "FAILED");
}

static void matched(MPI_Comm comm, int rank, const char *name) {
  int errs0 = mt_errors;
  for (int k = 0; k < 4; k++) {
    for (int sync = 0; sync < 2; sync++) {
      int tag = 200 + 10 * k + sync;
      if (rank == 0) {
        MPI_Request r;
        MPI_Status st;
        int flag = 1, count = -1;
        MPI_Recv(NULL, 0, MPI_CHAR, 1, TAG_GO, comm, MPI_STATUS_IGNORE);
        post(k, sync, tag, comm, &r);
        MPI_Recv(NULL, 0, MPI_CHAR, 1, TAG_DONE, comm, MPI_STATUS_IGNORE);
        MPI_Cancel(&r);
        complete(&r, &st, (k + sync) % 2);
        MPI_Test_cancelled(&st, &flag);
        CHECK(flag == 0);
        MPI_Get_count(&st, k == 2 ? strided : MPI_CHAR, &count);
        CHECK(count == (k == 1 ? BIG : k == 2 ? 1 : 16));
        if (k == 3) MPI_Request_free(&r);
      } else if (rank == 1) {
        MPI_Request r;
        MPI_Status st;
        int count = -1;
        memset(rbuf, 0, bytes_of(k));
        MPI_Irecv(rbuf, BIG, MPI_CHAR, 0, tag, comm, &r);
        MPI_Send(NULL, 0, MPI_CHAR, 0, TAG_GO, comm);
        MPI_Wait(&r, &st);
        MPI_Get_count(&st, MPI_CHAR, &count);
        CHECK(count == bytes_of(k));
        if (k != 2) CHECK(memcmp(rbuf, sbuf, (size_t)count) == 0);
        else CHECK(((int *)rbuf)[4] == ((int *)sbuf)[8] && ((int *)rbuf)[255] == ((int *)sbuf)[507]);
        MPI_Send(NULL, 0, MPI_CHAR, 0, TAG_DONE, comm);
      }
    }
  }
  say("%s: matched sends completed: %s", name, mt_errors == errs0 ? "ok" : "FAILED");
}

int main(int argc, char **argv) {
  mt_init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  sbuf = malloc(BIG);
  rbuf = malloc(BIG);
  for (int i = 0; i < BIG; i++) sbuf[i] = (char)(i * 7 + 3);
  MPI_Type_vector(64, 4, 8, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);

  unmatched(MPI_COMM_WORLD, rank, "world");
  matched(MPI_COMM_WORLD, rank, "world");
  unmatched(dup, rank, "dup");
  matched(dup, rank, "dup");

  /* Nothing from rank 0 is left at rank 1 on either communicator. */
  if (rank == 0) {
    MPI_Send(NULL, 0, MPI_CHAR, 1, TAG_END, MPI_COMM_WORLD);
    MPI_Send(NULL, 0, MPI_CHAR, 1, TAG_END, dup);
  } else if (rank == 1) {
    int flag = 1;
    MPI_Recv(NULL, 0, MPI_CHAR, 0, TAG_END, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(NULL, 0, MPI_CHAR, 0, TAG_END, dup, MPI_STATUS_IGNORE);
    MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    CHECK(flag == 0);
    MPI_Iprobe(0, MPI_ANY_TAG, dup, &flag, MPI_STATUS_IGNORE);
    CHECK(flag == 0);
  }
  say("leftovers: none");

  MPI_Comm_free(&dup);
  MPI_Type_free(&strided);
  free(sbuf);
  free(rbuf);
  return mt_finish();
}
