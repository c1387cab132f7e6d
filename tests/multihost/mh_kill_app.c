/* mh_kill_app: each rank of the first half (host A under by-slot mapping) exchanges with its
 * partner in the second half (host B), rank r with r + size/2, in a loop until something
 * fails, so that a host killed mid-job (mh_kill_host.sh) finds every survivor inside a call to
 * a rank of the dead host (never waiting on a live neighbour that has stopped).
 *
 *   mh_kill_app [--return]
 *
 * Rank 0 prints "RUNNING JOB <PMIx namespace>" after 20 rounds (the cue to kill a host).
 * With --return the program sets RRT_ERRORS_RETURN on RRT_COMM_WORLD: a survivor whose call
 * fails prints "SURVIVOR rank R: <error> after N rounds" when the error is
 * RRT_ERR_PROC_FAILED ("FAIL ..." and exit 1 otherwise); the survivors, ranks 0 .. size/2-1
 * (host A under by-slot mapping; the test kills host B), then check in with rank 0, so that
 * none exits (and has the launcher end the job) before all have printed; then all exit 3. Without it (RRT_PEER_FAILURE=auto), rrt
 * tells the launcher to abort the job when it finds a peer gone. A job nobody kills fails
 * after 300 s ("FAIL ... nobody failed"), never hangs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rrt/rrt.h>

int main(int argc, char **argv) {
  if (rrt_init(&argc, &argv) != RRT_SUCCESS) return 1;
  const int keepGoing = argc > 1 && strcmp(argv[1], "--return") == 0;
  if (keepGoing) rrt_comm_set_errhandler(RRT_COMM_WORLD, RRT_ERRORS_RETURN);
  int rank, size;
  rrt_comm_rank(RRT_COMM_WORLD, &rank);
  rrt_comm_size(RRT_COMM_WORLD, &size);
  const int half = size / 2;
  const int partner = rank < half ? rank + half : rank - half;
  if (size % 2 != 0) {
    printf("FAIL mh_kill_app: needs an even number of ranks\n");
    return 1;
  }
  static int out[16384], in[2][16384];  /* 64 KiB: a rendezvous over TCP */
  const time_t start = time(NULL);
  for (long round = 0;; ++round) {
    for (int i = 0; i < 16384; ++i) out[i] = rank * 100000 + (int)round + i;
    int e = rrt_sendrecv(out, 16384, RRT_INT32, partner, 7, in[0], 16384, RRT_INT32, partner, 7,
                         RRT_COMM_WORLD, RRT_STATUS_IGNORE);
    if (e == RRT_SUCCESS)
      e = rrt_sendrecv(out, 1, RRT_INT32, partner, 8, in[1], 1, RRT_INT32, partner, 8,
                       RRT_COMM_WORLD, RRT_STATUS_IGNORE);
    if (e != RRT_SUCCESS) {
      if (e == RRT_ERR_PROC_FAILED) {
        printf("SURVIVOR rank %d: %s after %ld rounds\n", rank, rrt_strerror(e), round);
        fflush(stdout);
        int token = rank;
        if (rank == 0) {
          for (int r = 1; r < half; ++r)
            if (rrt_recv(&token, 1, RRT_INT32, r, 99, RRT_COMM_WORLD, RRT_STATUS_IGNORE) != RRT_SUCCESS)
              printf("FAIL mh_kill_app: survivor %d did not check in\n", r);
        } else if (rank < half) {
          rrt_send(&token, 1, RRT_INT32, 0, 99, RRT_COMM_WORLD);
        }
        fflush(stdout);
        _exit(3);  /* the job is broken: no finalize (its fence would wait for the dead) */
      }
      printf("FAIL mh_kill_app: rank %d: %s after %ld rounds\n", rank, rrt_strerror(e), round);
      fflush(stdout);
      _exit(1);
    }
    if (in[0][16383] != partner * 100000 + (int)round + 16383 ||
        in[1][0] != partner * 100000 + (int)round) {
      printf("FAIL mh_kill_app: rank %d: wrong data in round %ld\n", rank, round);
      fflush(stdout);
      _exit(1);
    }
    if (round == 20 && rank == 0) {
      const char *ns = getenv("PMIX_NAMESPACE");
      printf("RUNNING JOB %s\n", ns ? ns : "?");
      fflush(stdout);
    }
    if (time(NULL) - start > 300) {
      printf("FAIL mh_kill_app: rank %d: nobody failed within 300 s\n", rank);
      fflush(stdout);
      _exit(1);
    }
    usleep(2000);
  }
}
