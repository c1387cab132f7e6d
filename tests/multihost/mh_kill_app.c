/* mh_kill_app: ranks exchange with both ring neighbours in a loop until something fails, so
 * that a host killed mid-job (mh_kill_host.sh) finds every rank inside a call to a peer.
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
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  static int out[16384], in[2][16384];  /* 64 KiB: rendezvous over TCP, eager over shm */
  const time_t start = time(NULL);
  for (long round = 0;; ++round) {
    for (int i = 0; i < 16384; ++i) out[i] = rank * 100000 + (int)round + i;
    int e = rrt_sendrecv(out, 16384, RRT_INT32, right, 7, in[0], 16384, RRT_INT32, left, 7,
                         RRT_COMM_WORLD, RRT_STATUS_IGNORE);
    if (e == RRT_SUCCESS)
      e = rrt_sendrecv(out, 16384, RRT_INT32, left, 8, in[1], 16384, RRT_INT32, right, 8,
                       RRT_COMM_WORLD, RRT_STATUS_IGNORE);
    if (e != RRT_SUCCESS) {
      if (e == RRT_ERR_PROC_FAILED) {
        printf("SURVIVOR rank %d: %s after %ld rounds\n", rank, rrt_strerror(e), round);
        fflush(stdout);
        int token = rank;
        if (rank == 0) {
          for (int r = 1; r < size / 2; ++r)
            if (rrt_recv(&token, 1, RRT_INT32, r, 99, RRT_COMM_WORLD, RRT_STATUS_IGNORE) != RRT_SUCCESS)
              printf("FAIL mh_kill_app: survivor %d did not check in\n", r);
        } else if (rank < size / 2) {
          rrt_send(&token, 1, RRT_INT32, 0, 99, RRT_COMM_WORLD);
        }
        fflush(stdout);
        _exit(3);  /* the job is broken: no finalize (its fence would wait for the dead) */
      }
      printf("FAIL mh_kill_app: rank %d: %s after %ld rounds\n", rank, rrt_strerror(e), round);
      fflush(stdout);
      _exit(1);
    }
    if (in[0][0] != left * 100000 + (int)round || in[1][0] != right * 100000 + (int)round) {
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
