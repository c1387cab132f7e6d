/* A rrt program that fails on purpose, for tests/fault/fault_suite.sh.
 *
 *   fault_app MODE [pidfile-dir [token]]
 *
 * (the token is ignored: it lets the test find exactly its own ranks with pgrep). Each rank
 * first prints "rank R: job ID" (ID: the PMIx namespace as rrt names its /dev/shm files).
 * Every rank writes DIR/rank.R.pid (when DIR is given), ignores SIGTERM where the mode says so
 * (so that the test sees what its rrt calls return before rrun's SIGKILL escalation), and
 * prints one line per observation, flushed at once:
 *   "rank R: OP to/from dead rank D returned NAME"
 * Modes (ranks >= 2 unless said):
 *   die-in-rndv     rank 1 starts a 32 MiB rendezvous send to rank 0 and kills itself with
 *                   SIGKILL before rank 0 reads the data; rank 0 then receives (RGET by CMA from
 *                   a dead process) and reports the error.
 *   send-to-dead    rank 1 kills itself after a barrier; rank 0 sends 4 KiB (eager) messages to it
 *                   until a send fails (the ring fills; the transport finds the peer gone).
 *   coll-to-dead    as send-to-dead with rrt_bcast from rank 0 (the blocking collectives' direct
 *                   forms); once one fails, rrt_allreduce and rrt_barrier fail at once too.
 *   recv-from-dead  rank 1 kills itself after a barrier; rank 0 receives from it (nothing comes:
 *                   the transport must look whether the peer is alive while rank 0 waits).
 *   shm-allreduce-to-dead  2 ranks: one 1 MiB allreduce (the shared-memory algorithm; it makes
 *                   the communicator's segment), then rank 1 kills itself and rank 0 runs the
 *                   same allreduce, which waits on rank 1's counters until it finds it gone.
 *   segv            rank 1 segfaults inside a job whose other ranks wait in a receive.
 *   abort           rank 1 calls rrt_abort(7) while the others wait in a receive.
 *   exit3           rank 1 exits 3 without finalizing while the others wait in a receive.
 *   hang            every rank waits for a message that never comes (for timeouts, signals,
 *                   and kill -9 of rrun).
 */
#include <rrt/rrt.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size;

static void say(const char *op, int peer, int rc) {
  printf("rank %d: %s dead rank %d returned %s\n", rank, op, peer, rc == RRT_SUCCESS ? "success" : rrt_strerror(rc));
  fflush(stdout);
}

static void wait_forever(void) {
  int x;
  /* A receive nobody matches: blocks in rrt's progress loop. */
  rrt_recv(&x, 1, RRT_INT32, RRT_ANY_SOURCE, 999, RRT_COMM_WORLD, RRT_STATUS_IGNORE);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: fault_app MODE [pidfile-dir]\n");
    return 2;
  }
  const char *mode = argv[1];
  if (rrt_init(&argc, &argv) != RRT_SUCCESS) return 1;
  rrt_comm_rank(RRT_COMM_WORLD, &rank);
  rrt_comm_size(RRT_COMM_WORLD, &size);
  rrt_comm_set_errhandler(RRT_COMM_WORLD, RRT_ERRORS_RETURN);
  if (argc > 2) {
    char path[4096];
    snprintf(path, sizeof path, "%s/rank.%d.pid", argv[2], rank);
    FILE *f = fopen(path, "w");
    if (f) {
      fprintf(f, "%d\n", (int)getpid());
      fclose(f);
    }
  }
  {
    char id[256];
    const char *ns = getenv("PMIX_NAMESPACE");
    snprintf(id, sizeof id, "%s", ns ? ns : "");
    for (char *c = id; *c; ++c)
      if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
            *c == '_' || *c == '.' || *c == '-'))
        *c = '_';
    printf("rank %d: job %s\n", rank, id);
    fflush(stdout);
  }
  if (size < 2) {
    printf("SKIP fault_app: needs 2 ranks\n");
    rrt_finalize();
    return 0;
  }

  if (!strcmp(mode, "die-in-rndv")) {
    const size_t n = (size_t)32 << 20;
    char *buf = malloc(n);
    memset(buf, rank + 1, n);
    if (rank == 0) signal(SIGTERM, SIG_IGN);
    rrt_barrier(RRT_COMM_WORLD);
    if (rank == 1) {
      rrt_request_t r;
      rrt_isend(buf, n, RRT_BYTE, 0, 5, RRT_COMM_WORLD, &r); /* the RTS is out */
      raise(SIGKILL);
    } else if (rank == 0) {
      usleep(200 * 1000); /* let rank 1 die first: its RTS waits in our ring */
      int rc = rrt_recv(buf, n, RRT_BYTE, 1, 5, RRT_COMM_WORLD, RRT_STATUS_IGNORE);
      say("recv from", 1, rc);
    }
    wait_forever();
  } else if (!strcmp(mode, "send-to-dead") || !strcmp(mode, "coll-to-dead")) {
    static char msg[4 << 10];
    const int coll = !strcmp(mode, "coll-to-dead");
    if (rank == 0) signal(SIGTERM, SIG_IGN);
    rrt_barrier(RRT_COMM_WORLD);
    if (rank == 1) raise(SIGKILL);
    if (rank == 0) {
      int rc = RRT_SUCCESS;
      for (int i = 0; i < 100000 && rc == RRT_SUCCESS; ++i)
        rc = coll ? rrt_bcast(msg, sizeof msg, RRT_BYTE, 0, RRT_COMM_WORLD)
                  : rrt_send(msg, sizeof msg, RRT_BYTE, 1, 1, RRT_COMM_WORLD);
      say(coll ? "bcast to" : "send to", 1, rc);
      /* Later calls fail at once. */
      if (coll) {
        int in = 1, out = 0;
        say("allreduce with", 1, rrt_allreduce(&in, &out, 1, RRT_INT32, RRT_SUM, RRT_COMM_WORLD));
        say("barrier with", 1, rrt_barrier(RRT_COMM_WORLD));
      } else {
        say("next send to", 1, rrt_send(msg, 8, RRT_BYTE, 1, 1, RRT_COMM_WORLD));
      }
    }
    wait_forever();
  } else if (!strcmp(mode, "recv-from-dead")) {
    int x = 0;
    if (rank == 0) signal(SIGTERM, SIG_IGN);
    rrt_barrier(RRT_COMM_WORLD);
    if (rank == 1) raise(SIGKILL);
    if (rank == 0) {
      say("recv from", 1, rrt_recv(&x, 1, RRT_INT32, 1, 5, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
      say("next recv from", 1, rrt_recv(&x, 1, RRT_INT32, 1, 5, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
    }
    wait_forever();
  } else if (!strcmp(mode, "shm-allreduce-to-dead")) {
    enum { kCount = 1 << 18 };  /* floats: 1 MiB, the shared-memory allreduce at 2 ranks */
    float *in = calloc(kCount, sizeof *in), *out = calloc(kCount, sizeof *out);
    if (rank == 0) signal(SIGTERM, SIG_IGN);
    int rc = rrt_allreduce(in, out, kCount, RRT_FLOAT, RRT_SUM, RRT_COMM_WORLD);
    if (rc != RRT_SUCCESS) say("first allreduce with live", 1, rc);
    rrt_barrier(RRT_COMM_WORLD);
    if (rank == 1) raise(SIGKILL);
    if (rank == 0) {
      usleep(100 * 1000);
      say("shm allreduce with", 1, rrt_allreduce(in, out, kCount, RRT_FLOAT, RRT_SUM, RRT_COMM_WORLD));
    }
    wait_forever();
  } else if (!strcmp(mode, "segv")) {
    rrt_barrier(RRT_COMM_WORLD);
    if (rank == 1) {
      volatile int *p = (volatile int *)(uintptr_t)16;
      *p = 1;
    }
    wait_forever();
  } else if (!strcmp(mode, "abort")) {
    rrt_barrier(RRT_COMM_WORLD);
    if (rank == 1) rrt_abort(RRT_COMM_WORLD, 7);
    wait_forever();
  } else if (!strcmp(mode, "exit3")) {
    rrt_barrier(RRT_COMM_WORLD);
    if (rank == 1) _exit(3);
    wait_forever();
  } else if (!strcmp(mode, "hang")) {
    rrt_barrier(RRT_COMM_WORLD);
    printf("rank %d: waiting\n", rank);
    fflush(stdout);
    wait_forever();
  } else {
    fprintf(stderr, "fault_app: unknown mode %s\n", mode);
    return 2;
  }
  rrt_finalize();
  return 0;
}
